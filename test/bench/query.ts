// npm run bench:query — overhead of the query proxy over running the same SELECT directly, for a 100-row result.
//
// Baseline: the same SELECT (the request's view, ORDER BY id LIMIT 100) run directly on the same database through the
// same driver client the service uses (node-postgres: a connection checked out of the service's pool, extended
// protocol, rows as arrays; PGlite: the same instance; Data API: the same RDSDataClient), as the service's own user,
// with no role, no transaction, no checks and no bookkeeping.
// Proxy (domain): runQuery — request lookup (or its cached fixed parts), parse + allowlist (libpg-query), the
// request's status checked in the query's own transaction, role + statement timeout + search_path + read-only,
// the capped statement, rollback, value normalization and byte cap, usage event. Also through HTTP (API Gateway
// emulator, middy, JWT auth), for reference. Samples of the two are interleaved so that machine load hits both alike.
// Then the floor the layers alone set (the role session, interleaved the same way) and where the time goes: each
// phase timed on its own. Goal: domain ratio ≤ 1.5×.
//
// BENCH_DRIVER=pglite (default) | postgres | data-api (the last two on TEST_DATABASE_URL, else on a
// PostgreSQL from npm started for the run); BENCH_ITERATIONS=300.
import { sql } from 'drizzle-orm';
import type { QueryArrayConfig } from 'pg';
import type { Principal } from '#shared/core/auth/principal.ts';
import { setLogLevel } from '#shared/core/logger.ts';
import { roleSessionFor } from '#shared/requests/environments/builtin/drivers.ts';
import { createBuiltinProvider } from '#shared/requests/environments/builtin/provider.ts';
import { cappedStatement } from '#shared/requests/environments/builtin/results.ts';
import { environmentNames } from '#shared/requests/environments/builtin/view-sql.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { checkStatement, loadSqlParser } from '#shared/requests/query/guard.ts';
import { queryRow, recordUsage, runQuery, viewsOf } from '#shared/requests/query/proxy.ts';
import { findRequest } from '#shared/requests/requests.ts';
import { type DriverKind, useBenchDatabase } from '#test/support/databases.ts';
import { startTestService } from '#test/support/service.ts';

setLogLevel('error');
const driver = (process.env.BENCH_DRIVER ?? 'pglite') as DriverKind;
if (driver !== 'pglite') await useBenchDatabase();
const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
const svc = await startTestService(driver);
const database = svc.runtime.database;
const db = database.db;

/** The SELECT run directly: same client, same protocol and row mode as the proxy's statement. */
function directRunner(text: string): () => Promise<number> {
  if (database.driver === 'postgres') {
    const pool = database.client;
    // queryMode is node-postgres' own option, which its type declarations do not name yet.
    const config: QueryArrayConfig & { queryMode: 'extended' } = {
      text,
      rowMode: 'array',
      queryMode: 'extended',
    };
    return async () => {
      const conn = await pool.connect();
      try {
        return (await conn.query(config)).rows.length;
      } finally {
        conn.release();
      }
    };
  }
  if (database.driver === 'pglite') {
    const pglite = database.client;
    return async () => (await pglite.query(text, [], { rowMode: 'array' })).rows.length;
  }
  return async () => ((await db.execute(sql.raw(text))) as unknown as { records: unknown[] }).records.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;
const fmt = (x: number) => `${x.toFixed(3)} ms`.padStart(10);

async function sample(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Interleaved samples of several functions (one of each per round), after a warm-up. */
async function interleaved(fns: Array<() => Promise<unknown>>, n: number): Promise<number[][]> {
  for (let i = 0; i < 30; i++) for (const fn of fns) await fn();
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    for (const [k, fn] of fns.entries()) {
      const t0 = performance.now();
      await fn();
      out[k]?.push(performance.now() - t0);
    }
  }
  return out;
}

let requestId: string | undefined;
try {
  await seedDemoDatasource(db);
  const admin = await svc.adminToken();
  const password = 'a long enough password';
  await svc.call('POST', '/v1/admin/users', {
    token: admin,
    body: { email: 'bench@bench.test', name: 'bench', password, roles: ['user'] },
  });
  const login = await svc.call('POST', '/v1/auth/login', { body: { email: 'bench@bench.test', password } });
  const { access_token: token, user } = login.body.data as { access_token: string; user: { id: string } };
  const columns = ['id', 'customer_id', 'product_id', 'quantity', 'total', 'status', 'region', 'ordered_at'];
  const created = await svc.call('POST', '/v1/requests', {
    token,
    body: {
      title: 'bench',
      scope: {
        datasources: [
          {
            datasets: [
              { namespace: 'orders', source: { kind: 'postgres', name: 'demo', table: 'orders' }, columns },
            ],
          },
        ],
      },
    },
  });
  const id = (created.body.data as { id: string }).id;
  requestId = id;
  const approved = await svc.call('POST', `/v1/admin/requests/${id}/approve`, { token: admin });
  if ((approved.body.data as { status: string }).status !== 'active') throw new Error(approved.text);

  const statement = 'SELECT * FROM orders ORDER BY id LIMIT 100';
  const { schema, role } = environmentNames(id);
  const direct = directRunner(`SELECT * FROM ${schema}.orders ORDER BY id LIMIT 100`);
  const principal: Principal = {
    subject: user.id,
    email: 'bench@bench.test',
    name: 'bench',
    roles: ['user'],
    tokenUse: 'session',
  };
  const provider = createBuiltinProvider(database);
  const limits = { statementTimeoutMs: 5000, maxRows: 1000, maxBytes: 1 << 20 };
  const proxy = () => runQuery(database, provider, limits, id, statement, principal, '127.0.0.1');
  const check = await proxy();
  if (check.row_count !== 100 || (await direct()) !== 100) throw new Error('expected 100 rows');

  const [d, p] = await interleaved([direct, proxy], iterations);
  // A keep-alive socket the emulator closed while PGlite held the thread can be reset on reuse: retry that once.
  const http = () =>
    svc
      .call('POST', `/v1/requests/${id}/query`, { token, body: { sql: statement } })
      .catch(() => svc.call('POST', `/v1/requests/${id}/query`, { token, body: { sql: statement } }));
  const [dh, h] = await interleaved([direct, http], Math.min(iterations, 200));
  const ratio = median(p as number[]) / median(d as number[]);
  // Each proxy sample over the direct sample taken just before it: both under the same machine load.
  const paired = median((p as number[]).map((x, i) => x / ((d as number[])[i] as number)));
  const q1 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 4)] as number;
  console.log(
    `bench:query on ${driver}, 100-row result, ${iterations} interleaved iterations (median / p95)`,
  );
  console.log(
    `  direct SELECT, same client, no role            ${fmt(median(d as number[]))} / ${fmt(p95(d as number[]))}`,
  );
  console.log(
    `  query proxy, domain (runQuery)                ${fmt(median(p as number[]))} / ${fmt(p95(p as number[]))}   ratio ${ratio.toFixed(2)}×`,
  );
  console.log(
    `  query proxy through HTTP (emulator, middy, JWT) ${fmt(median(h as number[]))} / ${fmt(p95(h as number[]))}   ratio ${(median(h as number[]) / median(dh as number[])).toFixed(2)}×`,
  );
  console.log(
    `  domain ratio, other views: median of paired ratios ${paired.toFixed(2)}×, first quartiles ${(q1(p as number[]) / q1(d as number[])).toFixed(2)}×`,
  );

  // The floor the defence layers set: the role session with the capped statement and nothing else (no checks, no
  // usage event), interleaved with the direct SELECT like the proxy above.
  await loadSqlParser();
  const session = roleSessionFor(database);
  const sessionOnly = () =>
    session(cappedStatement(statement, limits), {
      role,
      schema,
      timeoutMs: 5000,
      requestId: id,
      keep: limits,
    });
  const [ds, s] = await interleaved([direct, sessionOnly], iterations);
  console.log(
    `  role session alone (no checks, no usage event)  ${fmt(median(s as number[]))} / ${fmt(p95(s as number[]))}   ratio ${(median(s as number[]) / median(ds as number[])).toFixed(2)}×`,
  );

  // Where the time goes: each phase on its own (medians; they overlap slightly with the totals above).
  const views = viewsOf({ scope: (await findRequest(db, id))?.scope ?? {} });
  const n = Math.min(iterations, 200);
  const phases: Array<[string, () => Promise<unknown>]> = [
    ['request lookup (first query of a request only)', () => queryRow(db, id, principal)],
    ['parse + allowlist (libpg-query)', async () => checkStatement(statement, { schema, views })],
    ['session: setup + capped statement + rollback', sessionOnly],
    [
      'session: setup + plain statement + rollback',
      () => session(statement, { role, schema, timeoutMs: 5000, requestId: id }),
    ],
    [
      'session with SELECT 1 (its fixed cost)',
      () => session('SELECT 1', { role, schema, timeoutMs: 5000, requestId: id }),
    ],
    [
      'usage event INSERT',
      () =>
        recordUsage(database, id, principal, '127.0.0.1', 'query', {
          sql_sha256: 'a'.repeat(64),
          row_count: 100,
          truncated: false,
          duration_ms: 1.5,
        }),
    ],
    ['direct SELECT (again)', direct],
  ];
  console.log('  where the time goes (each phase alone, median):');
  for (const [name, fn] of phases) {
    for (let i = 0; i < 20; i++) await fn();
    console.log(`    ${name.padEnd(50)} ${fmt(median(await sample(fn, n)))}`);
  }
  console.log(`  goal: domain ratio ≤ 1.5× → ${ratio <= 1.5 ? 'met' : 'not met'} (${ratio.toFixed(2)}×)`);
} finally {
  if (requestId) {
    const row = await findRequest(db, requestId);
    if (row) await createBuiltinProvider(database).teardown(row);
  }
  await svc.dispose();
}
