// What is particular to the builtin environment over the RDS Data API, as the deployed stack runs it (the whole flow
// runs on it in test/integration/requests/environments.test.ts too): the calls a query makes (a Data API transaction: setup, the
// statement, rollback; one statement per call), values mapped as node-postgres gives them, and results capped in the
// database within the Data API's 1 MiB answers. Through the real RDSDataClient and drizzle's aws-data-api/pg driver
// against test/support/data-api-server.ts, executing on the PostgreSQL at TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Principal } from '#shared/core/auth/principal.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { createBuiltinProvider } from '#shared/requests/environments/builtin/provider.ts';
import { environmentNames } from '#shared/requests/environments/builtin/view-sql.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { runQuery } from '#shared/requests/query/proxy.ts';
import { findRequest } from '#shared/requests/requests.ts';
import type { DataApiServer } from '#test/support/data-api-server.ts';
import {
  driversUnderTest,
  type ProvisionedDatabase,
  provisionDatabase,
  testDatabaseUrl,
} from '#test/support/databases.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

interface QueryData {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
}

const scope = {
  datasources: [
    {
      datasets: [
        {
          namespace: 'EuOrders',
          source: { kind: 'postgres', name: 'demo', table: 'orders' },
          columns: ['id', 'total', 'status', 'region', 'ordered_at', 'customers.country'],
          filters: { logic: 'and', conditions: [{ condition: { column: 'region', op: 'eq', value: 'EU' } }] },
          joins: [
            {
              namespace: 'customers',
              on: 'orders.customer_id = customers.id',
              source: { kind: 'postgres', name: 'demo', table: 'customers' },
            },
          ],
        },
      ],
    },
  ],
};

describe('request environments over the RDS Data API', () => {
  if (!testDatabaseUrl() || !driversUnderTest().includes('data-api')) return;
  let server: DataApiServer;
  let svc: TestService;
  let database: ProvisionedDatabase;
  let admin: string;
  let ana: string;
  let anaId: string;
  const db = () => svc.runtime.database.db;

  before(async () => {
    database = await provisionDatabase('data-api');
    server = database.dataApi as DataApiServer;
    svc = await startTestService('pglite', { db: { dsn: database.dsn } });
    assert.equal(svc.runtime.database.driver, 'data-api');
    admin = await svc.adminToken();
    await seedDemoDatasource(db());
    const password = 'a long enough password';
    await svc.call('POST', '/v1/admin/users', {
      token: admin,
      body: { email: 'ana@example.test', name: 'ana', password, roles: ['user'] },
    });
    const login = await svc.call('POST', '/v1/auth/login', { body: { email: 'ana@example.test', password } });
    ({
      access_token: ana,
      user: { id: anaId },
    } = login.body.data as {
      access_token: string;
      user: { id: string };
    });
  });
  after(async () => {
    // Roles are cluster-wide: tear down what is left before the database goes.
    if (svc) {
      const provider = createBuiltinProvider(svc.runtime.database);
      const left = await queryRows(
        db(),
        sql`SELECT id::text AS id FROM requests WHERE environment_status = 'ready'`,
        { id: col.text },
      );
      for (const { id } of left) {
        const row = await findRequest(db(), id);
        if (row) await provider.teardown(row);
      }
      await svc.dispose();
    }
    await database?.cleanup();
  });

  const activeRequest = async () => {
    const created = await svc.call('POST', '/v1/requests', { token: ana, body: { title: 'eu', scope } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body.data as { id: string }).id;
    const approved = await svc.call('POST', `/v1/admin/requests/${id}/approve`, { token: admin, body: {} });
    const data = approved.body.data as { status: string; tunnel: unknown };
    assert.equal(data.status, 'active', JSON.stringify(data.tunnel));
    return id;
  };
  const query = (id: string, text: string) =>
    svc.call('POST', `/v1/requests/${id}/query`, { token: ana, body: { sql: text } });

  test('provision, query, revoke over the Data API: calls, values, views', async () => {
    const id = await activeRequest();
    const { schema, role } = environmentNames(id);
    // Mixed-case dataset names are lower-case views, read unquoted in any case.
    const res = await query(
      id,
      'SELECT id, total, ordered_at, customers_country FROM EuOrders ORDER BY id LIMIT 3',
    );
    assert.equal(res.status, 200, res.text);
    const data = res.body.data as QueryData;
    assert.deepEqual(
      data.columns.map((c) => `${c.name}:${c.type}`),
      ['id:int4', 'total:numeric', 'ordered_at:timestamptz', 'customers_country:text'],
    );
    assert.equal(data.row_count, 3);
    const [first] = await queryRows(
      db(),
      sql`SELECT o.id, o.total::text AS total, to_char(o.ordered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
            c.country FROM demo.orders o JOIN demo.customers c ON c.id = o.customer_id
          WHERE o.region = 'EU' ORDER BY o.id LIMIT 1`,
    );
    assert.deepEqual(data.rows[0], [first?.id, first?.total, first?.at, first?.country]);
    // One statement per call: BeginTransaction, the setup (status check, role, timeout, search_path, read-only), the
    // statement, RollbackTransaction; and one INSERT for the usage event. The request's fixed parts are cached.
    server.resetCalls();
    const principal: Principal = {
      subject: anaId,
      email: 'ana@example.test',
      name: 'ana',
      roles: ['user'],
      tokenUse: 'session',
    };
    const limits = { statementTimeoutMs: 5000, maxRows: 100, maxBytes: 1 << 20 };
    const provider = createBuiltinProvider(svc.runtime.database);
    const direct = await runQuery(
      svc.runtime.database,
      provider,
      limits,
      id,
      'select count(*) from euorders',
      principal,
      '::1',
    );
    assert.equal(direct.row_count, 1);
    assert.deepEqual(
      { ...server.calls },
      { BeginTransaction: 1, Execute: 3, RollbackTransaction: 1 },
      'a query is five Data API calls',
    );

    // Scope enforcement and refusals answer as on the other drivers.
    assert.equal((await query(id, 'SELECT * FROM demo.orders')).body.error, 'sql_refused');
    assert.equal((await query(id, 'SELECT email FROM euorders')).body.error, 'query_failed');
    assert.equal(
      (await query(id, 'SELECT * FROM (WITH pg_views AS (SELECT 1) SELECT 1) a, pg_views')).status,
      400,
    );
    const view = await svc.call('GET', `/v1/requests/${id}`, { token: ana });
    const tunnel = (view.body.data as { tunnel: { credentials: Array<{ use_count: number }> } }).tunnel;
    assert.equal(tunnel.credentials[0]?.use_count, 2);

    const revoked = await svc.call('POST', `/v1/requests/${id}/revoke`, { token: ana, body: {} });
    assert.equal((revoked.body.data as { environment_status: string }).environment_status, 'torn_down');
    const [left] = await queryRows(
      db(),
      sql`SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = ${schema})::int AS s,
                 (SELECT count(*) FROM pg_roles WHERE rolname = ${role})::int AS r`,
    );
    assert.deepEqual(left, { s: 0, r: 0 });
    assert.equal((await query(id, 'SELECT 1')).status, 409);
  });

  test('rows and bytes are capped in the database; a row over max_bytes is refused', async () => {
    const id = await activeRequest();
    const provider = createBuiltinProvider(svc.runtime.database);
    const principal: Principal = {
      subject: anaId,
      email: 'ana@example.test',
      name: 'ana',
      roles: ['user'],
      tokenUse: 'session',
    };
    const run = (text: string, maxRows: number, maxBytes: number) =>
      runQuery(
        svc.runtime.database,
        provider,
        { statementTimeoutMs: 5000, maxRows, maxBytes },
        id,
        text,
        principal,
        '::1',
      );
    const rows = await run('SELECT id FROM euorders ORDER BY id', 4, 1 << 20);
    assert.deepEqual([rows.row_count, rows.truncated], [4, true]);
    const bytes = await run('SELECT id, status, region FROM euorders ORDER BY id', 1000, 200);
    assert.ok(bytes.truncated && bytes.row_count > 0, JSON.stringify(bytes));
    assert.ok(Buffer.byteLength(JSON.stringify(bytes.rows)) <= 200);
    await assert.rejects(run("SELECT string_agg(status, ',') FROM euorders", 1000, 200), {
      code: 'result_row_too_large',
    });
    const all = await run('SELECT count(*) FROM euorders', 1000, 1 << 20);
    assert.equal(all.truncated, false);
  });
});
