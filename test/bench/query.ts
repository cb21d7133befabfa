// npm run bench:query — overhead of the query proxy over running the same SELECT directly on the same database:
// the proxy path is load the request, parse + allowlist (libpg-query), read-only transaction + role switch +
// statement timeout, the statement, rollback, usage event + credential use_count. Reported as a ratio for a 100-row
// result, at the domain level and through HTTP (API Gateway emulator, middy, JWT auth). Goal: domain ratio ≤ 1.5×.
// Driver: PGlite; BENCH_DRIVER=postgres with TEST_DATABASE_URL for PostgreSQL.
import { sql } from 'drizzle-orm';
import type { Principal } from '#shared/auth/principal.ts';
import { createBuiltinProvider, environmentNames } from '#shared/domain/environments/builtin.ts';
import { seedDemoDatasource } from '#shared/domain/environments/demo.ts';
import { runQuery } from '#shared/domain/query-proxy.ts';
import { setLogLevel } from '#shared/http/logger.ts';
import type { DriverKind } from '#test/support/databases.ts';
import { startTestService } from '#test/support/service.ts';

setLogLevel('error');
const driver = (process.env.BENCH_DRIVER ?? 'pglite') as DriverKind;
const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
const svc = await startTestService(driver);
const db = svc.runtime.database.db;
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
  const created = await svc.call('POST', '/v1/requests', {
    token,
    body: {
      title: 'bench',
      scope: {
        datasources: [
          {
            datasets: [
              {
                namespace: 'orders',
                source: { kind: 'postgres', name: 'demo', table: 'orders' },
                columns: [
                  'id',
                  'customer_id',
                  'product_id',
                  'quantity',
                  'total',
                  'status',
                  'region',
                  'ordered_at',
                ],
              },
            ],
          },
        ],
      },
    },
  });
  const id = (created.body.data as { id: string }).id;
  const approved = await svc.call('POST', `/v1/admin/requests/${id}/approve`, { token: admin });
  if ((approved.body.data as { status: string }).status !== 'active') throw new Error(approved.text);

  const statement = 'SELECT * FROM orders ORDER BY id LIMIT 100';
  const { schema } = environmentNames(id);
  const direct = sql.raw(`SELECT * FROM ${schema}.orders ORDER BY id LIMIT 100`);
  const principal: Principal = {
    subject: user.id,
    email: 'bench@bench.test',
    name: 'bench',
    roles: ['user'],
    tokenUse: 'session',
  };
  const provider = createBuiltinProvider(svc.runtime.database);
  const limits = { statementTimeoutMs: 5000, maxRows: 1000, maxBytes: 1 << 20 };

  const time = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 30; i++) await fn();
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = performance.now();
      await fn();
      samples.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    return {
      median: samples[Math.floor(samples.length / 2)] as number,
      p95: samples[Math.floor(samples.length * 0.95)] as number,
    };
  };
  const d = await time(() => db.execute(direct));
  const p = await time(() => runQuery(db, provider, limits, id, statement, principal, '127.0.0.1'));
  const h = await time(() =>
    svc.call('POST', `/v1/requests/${id}/query`, { token, body: { sql: statement } }),
  );
  const check = await runQuery(db, provider, limits, id, statement, principal, '127.0.0.1');
  if (check.row_count !== 100) throw new Error(`expected 100 rows, got ${check.row_count}`);
  const fmt = (x: number) => `${x.toFixed(3)} ms`;
  console.log(`bench:query on ${driver}, 100-row result, ${iterations} iterations (median / p95)`);
  console.log(`  direct SELECT on the same database      ${fmt(d.median)} / ${fmt(d.p95)}`);
  console.log(
    `  query proxy (domain: parse, checks, role, usage event) ${fmt(p.median)} / ${fmt(p.p95)}  ratio ${(p.median / d.median).toFixed(2)}×`,
  );
  console.log(
    `  query proxy through HTTP (emulator, middy, JWT)        ${fmt(h.median)} / ${fmt(h.p95)}  ratio ${(h.median / d.median).toFixed(2)}×`,
  );
  console.log(`  goal: domain ratio ≤ 1.5× → ${p.median / d.median <= 1.5 ? 'met' : 'not met'}`);
  await provider.teardown((await import('#shared/domain/requests.ts').then((m) => m.findRequest(db, id)))!);
} finally {
  await svc.dispose();
}
