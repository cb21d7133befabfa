// npm run bench:http — requests/s of GET /v1/healthcheck, GET /v1/me and an authenticated admin list through the
// local server (API Gateway emulator + middy stack + PGlite), each as a ratio to a bare node:http server answering the
// same JSON in the same run. The load runs in a child process so it does not share the server's event loop.
// Then the cost of reading the caller from the users table on every request (shared/core/auth/caller.ts): the bearer
// check with it (identifyCaller) against the token's verification alone (authenticate), per call, on PGlite and on
// PostgreSQL and the Data API path, in the same run; and an admin read with the caller looked up first against the statement that reads it.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { authenticate } from '#shared/core/auth/authenticate.ts';
import { identifyCaller } from '#shared/core/auth/caller.ts';
import { readGuard } from '#shared/core/auth/read-guard.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { setLogLevel } from '#shared/core/logger.ts';
import { useBenchDatabase } from '#test/support/databases.ts';
import { startTestService } from '#test/support/service.ts';
import { type LoadResult, load } from './load.ts';
import { nextMessage } from './messages.ts';

if (process.argv[2] === '--child') {
  const [url, headers] = [
    process.argv[3] as string,
    JSON.parse(process.argv[4] ?? '{}') as Record<string, string>,
  ];
  const result = await load(url, {
    durationMs: Number(process.env.BENCH_MS ?? 3000),
    connections: 16,
    headers,
  });
  process.send?.(result);
  process.exit(0);
}

const measure = (url: string, headers: Record<string, string> = {}): Promise<LoadResult> =>
  nextMessage<LoadResult>(fork(fileURLToPath(import.meta.url), ['--child', url, JSON.stringify(headers)]));

setLogLevel('error');
const svc = await startTestService('pglite');
const token = await svc.adminToken();
for (let i = 0; i < 30; i++) {
  await svc.call('POST', '/v1/admin/users', {
    token,
    body: { email: `u${i}@bench.test`, password: 'a long enough password' },
  });
}
const health = await svc.call('GET', '/v1/healthcheck');
const me = await svc.call('GET', '/v1/me', { token });
const list = await svc.call('GET', '/v1/admin/users?limit=20', { token });

const bare = (payload: string) =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(payload);
    });
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
        close: () => server.close(),
      }),
    );
  });

const rows: Array<[string, LoadResult, LoadResult]> = [];
for (const [name, path, body, headers] of [
  ['GET /v1/healthcheck', '/v1/healthcheck', health.text, {}],
  ['GET /v1/me (admin JWT)', '/v1/me', me.text, { authorization: `Bearer ${token}` }],
  [
    'GET /v1/admin/users (admin JWT)',
    '/v1/admin/users?limit=20',
    list.text,
    { authorization: `Bearer ${token}` },
  ],
] as const) {
  const baseline = await bare(body);
  const b = await measure(baseline.url);
  baseline.close();
  const s = await measure(`${svc.url}${path}`, headers);
  rows.push([name, s, b]);
}
await svc.dispose();

/** Microseconds per call of `run`, the median of 5 rounds of `n` calls. */
async function perCall(n: number, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await run();
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await run();
    rounds.push(((performance.now() - start) * 1000) / n);
  }
  return rounds.sort((a, b) => a - b)[2] as number;
}

const callerRows: Array<[string, number, number]> = [];
const guardRows: Array<[string, number, number]> = [];
await useBenchDatabase();
for (const driver of ['pglite', 'postgres', 'data-api'] as const) {
  // The Data API path (the real RDS Data client against the local endpoint) takes milliseconds a call.
  const n = driver === 'data-api' ? 200 : 2000;
  const service = await startTestService(driver);
  const headers = { authorization: `Bearer ${await service.adminToken()}` };
  const request = {
    config: service.runtime.config,
    db: service.runtime.database.db,
    headers,
    sourceIp: '127.0.0.1',
  };
  const verified = await perCall(n, () => authenticate(service.runtime.config, headers));
  const withRead = await perCall(n, () => identifyCaller(request));
  callerRows.push([driver, verified, withRead]);
  // An admin read: the caller's lookup and then the route's statement, against the statement that reads both.
  const page = sql`SELECT id::text AS id, email FROM users ORDER BY email LIMIT 20`;
  const lookupFirst = await perCall(n, async () => {
    await identifyCaller(request);
    return queryRows(request.db, page);
  });
  const guarded = await perCall(n, async () => {
    const guard = readGuard(request, await authenticate(service.runtime.config, headers));
    const rows = await queryRows(guard.db, page);
    await guard.settle();
    return rows;
  });
  guardRows.push([driver, lookupFirst, guarded]);
  await service.dispose();
}

console.log(
  '\nbench:http — local server (emulator + middy + PGlite) vs bare node:http with the same JSON, 16 connections',
);
console.log('| route | service req/s | p50 ms | p99 ms | bare req/s | service / bare |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, s, b] of rows) {
  console.log(
    `| ${name} | ${s.perSecond.toFixed(0)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${b.perSecond.toFixed(0)} | ${(s.perSecond / b.perSecond).toFixed(3)} |`,
  );
  if (s.errors) console.log(`  (${s.errors} errors)`);
}
console.log(
  '\nThe caller from the users table on every request: the bearer check with the read (identifyCaller) vs the token verification alone (authenticate), per call, in process',
);
console.log('| database | verify only (µs) | verify + users read (µs) | the read (µs) | with ÷ without |');
console.log('|---|---:|---:|---:|---:|');
for (const [driver, verified, withRead] of callerRows) {
  console.log(
    `| ${driver} | ${verified.toFixed(0)} | ${withRead.toFixed(0)} | ${(withRead - verified).toFixed(0)} | ${(withRead / verified).toFixed(2)}× |`,
  );
}
console.log(
  '\nAn admin read (a page of 20 users): the caller looked up before the statement vs read by it (shared/core/auth/read-guard.ts), per call, in process',
);
console.log(
  '| database | lookup, then the statement (µs) | one guarded statement (µs) | guarded ÷ lookup first |',
);
console.log('|---|---:|---:|---:|');
for (const [driver, lookupFirst, guarded] of guardRows) {
  console.log(
    `| ${driver} | ${lookupFirst.toFixed(0)} | ${guarded.toFixed(0)} | ${(guarded / lookupFirst).toFixed(2)}× |`,
  );
}
