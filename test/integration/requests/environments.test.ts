// Request environments and the query proxy, on every database driver under test: the builtin provider (scope
// enforcement, teardown, expiry), each defence layer on its own, a corpus of hostile statements, and the http
// provider against a local environment service that errors, hangs and closes connections.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { handler as expireHandler } from '#functions/requests/expire.ts';
import type { Principal } from '#shared/core/auth/principal.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { ServiceError } from '#shared/core/errors.ts';
import { STATUS_OF_KIND } from '#shared/core/http/middleware/error-response.ts';
import { roleSessionFor } from '#shared/requests/environments/builtin/drivers.ts';
import { createBuiltinProvider } from '#shared/requests/environments/builtin/provider.ts';
import { databaseError } from '#shared/requests/environments/builtin/session.ts';
import { environmentNames } from '#shared/requests/environments/builtin/view-sql.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { createHttpProvider } from '#shared/requests/environments/http.ts';
import { EnvironmentInactiveError } from '#shared/requests/environments/types.ts';
import { provisionEnvironment } from '#shared/requests/lifecycle.ts';
import { runQuery } from '#shared/requests/query/proxy.ts';
import { approveRequest, findRequest } from '#shared/requests/requests.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { demoJoinedScope } from '#test/support/request-fixtures.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
interface RequestData {
  id: string;
  status: string;
  environment_id: string | null;
  environment_status: string | null;
  tunnel: {
    provider: string;
    status: string;
    last_error: string;
    credentials: Array<{
      username: string;
      use_count: number;
      last_used_at: string | null;
      is_active: boolean;
    }>;
  } | null;
  usage_events: Array<{ action_type: string; ip_address: string; metadata: Json }>;
}
interface QueryData {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  duration_ms: number;
}

/** Statements a requester might send to escape: each must be refused (4xx) or harmless. */
export const HOSTILE_SQL: string[] = [
  'DROP TABLE eu_orders',
  'DELETE FROM eu_orders',
  "UPDATE eu_orders SET status = 'x'",
  'INSERT INTO eu_orders (id) VALUES (1)',
  'TRUNCATE eu_orders',
  'CREATE TABLE x (a int)',
  'CREATE TABLE x AS SELECT * FROM eu_orders',
  'SELECT * INTO x FROM eu_orders',
  'ALTER TABLE eu_orders ADD COLUMN x int',
  'GRANT SELECT ON eu_orders TO PUBLIC',
  'COPY eu_orders TO STDOUT',
  "COPY (SELECT 1) TO PROGRAM 'id'",
  "COPY eu_orders FROM '/etc/passwd'",
  'SET ROLE postgres',
  'RESET ROLE',
  'SET SESSION AUTHORIZATION postgres',
  'SET statement_timeout = 0',
  'SELECT 1; COMMIT; DROP TABLE eu_orders',
  'SELECT 1; SELECT 2',
  'COMMIT',
  'BEGIN',
  'ROLLBACK; DELETE FROM demo.orders',
  'WITH d AS (DELETE FROM eu_orders RETURNING *) SELECT * FROM d',
  'WITH u AS (UPDATE eu_orders SET total = 0 RETURNING *) SELECT count(*) FROM u',
  'WITH i AS (INSERT INTO eu_orders (id) VALUES (1) RETURNING *) SELECT * FROM i',
  'SELECT * FROM demo.orders',
  'SELECT * FROM demo.customers',
  'SELECT * FROM public.users',
  'SELECT * FROM users',
  'SELECT * FROM audit_logs',
  'SELECT * FROM pg_catalog.pg_authid',
  'SELECT * FROM pg_shadow',
  'SELECT * FROM pg_roles',
  'SELECT * FROM information_schema.tables',
  'SELECT * FROM eu_orders o JOIN demo.customers c ON c.id = o.customer_id',
  'SELECT (SELECT email FROM demo.customers LIMIT 1)',
  'SELECT * FROM eu_orders WHERE EXISTS (SELECT 1 FROM public.users)',
  "SELECT pg_read_file('/etc/passwd')",
  "SELECT pg_read_binary_file('/etc/passwd')",
  "SELECT pg_ls_dir('.')",
  "SELECT lo_import('/etc/passwd')",
  "SELECT * FROM dblink('host=example.com', 'SELECT 1') AS t(a int)",
  'SELECT pg_sleep(60)',
  "SELECT set_config('role', 'postgres', false)",
  "SELECT set_config('statement_timeout', '0', false)",
  "SELECT current_setting('data_directory')",
  'SELECT pg_terminate_backend(1)',
  'SELECT pg_cancel_backend(1)',
  'SELECT pg_advisory_lock(1)',
  "SELECT 'pg_authid'::regclass",
  'SELECT * FROM eu_orders FOR UPDATE',
  'SELECT * FROM eu_orders FOR SHARE',
  'SELECT * FROM generate_series(1, 100000000)',
  "SELECT query_to_xml('SELECT * FROM demo.customers', true, true, '')",
  "SELECT xmlparse(document '<a/>')",
  'EXPLAIN ANALYZE SELECT * FROM eu_orders',
  'VACUUM eu_orders',
  'LISTEN x',
  "NOTIFY x, 'y'",
  'PREPARE p AS SELECT 1',
  'EXECUTE p',
  'DO $$ BEGIN PERFORM 1; END $$',
  'CALL some_proc()',
  'LOCK TABLE eu_orders',
  'SELECT * FROM eu_orders WHERE id = 1 UNION SELECT id, customer_id, total, status, region, email FROM demo.customers',
  'SELECT txid_current()',
  'SELECT * FROM "demo"."orders"',
  'SELECT * FROM eu_orders TABLESAMPLE SYSTEM (50)',
  'SELECT $1',
  'SELECT version(); DROP SCHEMA demo CASCADE',
  '',
  '   ;  ',
  'SELEC * FROM eu_orders',
  // CTE names are scoped to their query level: reusing one elsewhere must not reach the catalog relation it names.
  'SELECT * FROM (WITH pg_views AS (SELECT 1) SELECT 1) a, pg_views',
  'SELECT a.*, v.definition FROM (WITH pg_views AS (SELECT 1) SELECT 1) a, pg_views v',
  'SELECT * FROM (WITH pg_roles AS (SELECT 1) SELECT 1) a, pg_roles',
  'SELECT * FROM (WITH pg_settings AS (SELECT 1) SELECT 1) a, pg_settings',
  'SELECT * FROM (WITH users AS (SELECT 1) SELECT 1) a, users',
  'WITH a AS (SELECT * FROM pg_settings), pg_settings AS (SELECT 1) SELECT * FROM a',
  'SELECT * FROM eu_orders WHERE EXISTS (WITH pg_authid AS (SELECT 1) SELECT 1) AND id IN (SELECT 1 FROM pg_authid)',
  '(WITH pg_views AS (SELECT 1) SELECT * FROM pg_views) UNION ALL SELECT definition::int FROM pg_views',
  // Catalog relations, qualified or not.
  'SELECT definition FROM pg_views',
  "SELECT viewname, definition FROM pg_catalog.pg_views WHERE schemaname LIKE 'req_%'",
  'SELECT * FROM information_schema.views',
  'SELECT * FROM PG_SETTINGS',
  'SELECT rolname FROM "pg_catalog"."pg_roles"',
  // Results that would be enormous.
  'SELECT lpad(status, 100000000) FROM eu_orders',
  "SELECT rpad('x', 2000000000)",
  "SELECT replace(replace(replace(status, 'a', 'aaaaaaaa'), 'a', 'aaaaaaaa'), 'a', 'aaaaaaaa') FROM eu_orders",
  "SELECT repeat('x', 1000000000)",
];

for (const driver of driversUnderTest()) {
  describe(`request environments on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let ana: string;
    let anaId: string;
    let bob: string;
    const anaPrincipal = (): Principal => ({
      subject: anaId,
      email: 'ana@example.test',
      name: 'ana',
      roles: ['user'],
      tokenUse: 'session',
    });
    const adminPrincipal: Principal = {
      subject: 'another-admin',
      email: 'other-admin@example.test',
      name: 'x',
      roles: ['admin'],
      tokenUse: 'session',
    };

    const makeUser = async (email: string) => {
      const password = 'a long enough password';
      await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, name: email.split('@')[0], password, roles: ['user'] },
      });
      const login = await svc.call('POST', '/v1/auth/login', { body: { email, password } });
      const data = login.body.data as { access_token: string; user: { id: string } };
      return { token: data.access_token, id: data.user.id };
    };
    const createAs = async (token: string, scope: Json = demoJoinedScope) => {
      const res = await svc.call('POST', '/v1/requests', { token, body: { title: 'demo access', scope } });
      assert.equal(res.status, 201, res.text);
      return res.body.data as RequestData;
    };
    const activeRequest = async () => {
      const r = await createAs(ana);
      const res = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin, body: {} });
      assert.equal(res.status, 200, res.text);
      const data = res.body.data as RequestData;
      assert.equal(data.status, 'active', JSON.stringify(data.tunnel));
      return data;
    };
    const query = (id: string, text: string, token = ana) =>
      svc.call('POST', `/v1/requests/${id}/query`, { token, body: { sql: text } });
    const db = () => svc.runtime.database.db;
    const exists = async (schema: string, role: string) => {
      const [row] = await queryRows(
        db(),
        sql`SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = ${schema})::int AS s,
                   (SELECT count(*) FROM pg_roles WHERE rolname = ${role})::int AS r`,
      );
      return { schema: row?.s === 1, role: row?.r === 1 };
    };

    before(async () => {
      svc = await startTestService(driver);
      admin = await svc.adminToken();
      await seedDemoDatasource(db());
      assert.deepEqual(await seedDemoDatasource(db()), { seeded: false }, 'seeding twice adds nothing');
      ({ token: ana, id: anaId } = await makeUser('ana@example.test'));
      ({ token: bob } = await makeUser('bob@example.test'));
    });
    after(async () => {
      // Roles are cluster-wide on PostgreSQL: tear down what the tests left active before the database is dropped.
      const provider = createBuiltinProvider(svc.runtime.database);
      const left = await queryRows(
        db(),
        sql`SELECT id::text AS id FROM requests WHERE environment_status = 'ready' AND tunnel ->> 'provider' = 'builtin'`,
        { id: col.text },
      );
      for (const { id } of left) {
        const row = await findRequest(db(), id);
        if (row) await provider.teardown(row);
      }
      await svc?.dispose();
    });

    test('the demo datasource is in the catalog', async () => {
      const res = await svc.call('GET', '/v1/catalog?datasource_name=demo', { token: ana });
      const entries = (res.body.data as { entries: Array<{ target_name: string; target_location: string }> })
        .entries;
      assert.deepEqual(
        entries.map((e) => e.target_name),
        ['customers', 'orders', 'products'],
      );
    });

    test('lifecycle: create → approve → active with a builtin environment → query → usage recorded → revoke tears down', async () => {
      const r = await activeRequest();
      const { schema, role } = environmentNames(r.id);
      assert.equal(r.environment_id, schema);
      assert.equal(r.environment_status, 'ready');
      assert.equal(r.tunnel?.provider, 'builtin');
      assert.equal(r.tunnel?.credentials[0]?.username, role);
      assert.equal(r.tunnel?.credentials[0]?.use_count, 0);
      assert.deepEqual(await exists(schema, role), { schema: true, role: true });

      const res = await query(
        r.id,
        'SELECT count(*) AS n, min(region) AS lo, max(region) AS hi FROM eu_orders',
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body), ['data']);
      const data = res.body.data as QueryData;
      const [expected] = await queryRows(
        db(),
        sql`SELECT count(*)::int AS n FROM demo.orders WHERE region = 'EU' AND status IN ('paid', 'shipped')`,
        { n: col.number },
      );
      assert.equal(data.rows[0]?.[0], expected?.n, 'int8 is a JSON number on every driver');
      assert.ok((expected?.n ?? 0) > 10);
      assert.deepEqual(data.rows[0]?.slice(1), ['EU', 'EU']);
      assert.deepEqual(
        data.columns.map((c) => c.name),
        ['n', 'lo', 'hi'],
      );
      assert.equal(data.row_count, 1);
      assert.equal(data.truncated, false);
      assert.equal(typeof data.duration_ms, 'number');

      const after1 = await svc.call('GET', `/v1/requests/${r.id}`, { token: ana });
      const view = after1.body.data as RequestData;
      assert.equal(view.tunnel?.credentials[0]?.use_count, 1);
      assert.ok(view.tunnel?.credentials[0]?.last_used_at);
      const usage = view.usage_events[0];
      assert.equal(usage?.action_type, 'query');
      assert.equal(usage?.metadata.actor_email, 'ana@example.test');
      assert.match(String(usage?.metadata.sql_sha256), /^[0-9a-f]{64}$/);
      assert.equal(usage?.metadata.row_count, 1);

      const logs = await svc.call('GET', `/v1/admin/audit-logs?resource_id=${r.id}&sort=created_at`, {
        token: admin,
      });
      const actions = (logs.body.data as { logs: Array<{ action_type: string; source: string }> }).logs.map(
        (l) => `${l.source}:${l.action_type}`,
      );
      assert.deepEqual(actions, [
        'api:request.created',
        'api:request.approved',
        'env-svc:environment.provisioned',
        'env-svc:request.activated',
      ]);

      const revoked = await svc.call('POST', `/v1/requests/${r.id}/revoke`, {
        token: ana,
        body: { reason: 'done' },
      });
      assert.equal(revoked.status, 200, revoked.text);
      const rv = revoked.body.data as RequestData;
      assert.equal(rv.status, 'revoked');
      assert.equal(rv.environment_status, 'torn_down');
      assert.equal(rv.tunnel?.credentials[0]?.is_active, false);
      assert.deepEqual(await exists(schema, role), { schema: false, role: false });
      const late = await query(r.id, 'SELECT 1');
      assert.equal(late.status, 409);
      assert.equal(late.body.error, 'request_not_active');
      const verify = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal((verify.body.data as { intact: boolean }).intact, true);
    });

    test('scope enforcement: columns, rows and tables outside the scope are not readable', async () => {
      const r = await activeRequest();
      const price = await query(r.id, 'SELECT price FROM products');
      assert.equal(price.status, 400);
      assert.equal(price.body.error, 'query_failed');
      const email = await query(r.id, 'SELECT customers_email FROM eu_orders');
      assert.equal(email.status, 400);
      const joined = await query(r.id, 'SELECT customers_country FROM eu_orders LIMIT 1');
      assert.equal(joined.status, 200, 'declared join columns are readable');

      const rows = await query(
        r.id,
        "SELECT count(*) FROM eu_orders WHERE region <> 'EU' OR status NOT IN ('paid', 'shipped')",
      );
      assert.equal(rows.status, 200);
      assert.equal(Number((rows.body.data as QueryData).rows[0]?.[0]), 0);

      for (const text of [
        'SELECT * FROM demo.customers',
        'SELECT * FROM customers',
        'SELECT * FROM demo.orders',
      ]) {
        const res = await query(r.id, text);
        assert.equal(res.status, 400, text);
        assert.equal(res.body.error, 'sql_refused', text);
      }
      const cols = await query(r.id, 'SELECT * FROM products LIMIT 1');
      assert.deepEqual(
        (cols.body.data as QueryData).columns.map((c) => c.name),
        ['id', 'name', 'category'],
      );
      // Another request's views are outside this one, by name and by schema.
      const other = await activeRequest();
      const cross = await query(r.id, `SELECT * FROM ${environmentNames(other.id).schema}.products`);
      assert.equal(cross.status, 400);
      assert.equal(cross.body.error, 'sql_refused');
    });

    test('who may query: the requester only; pending is 409; another user 404; an admin who is not the requester 404, told why', async () => {
      const pending = await createAs(ana);
      const p = await query(pending.id, 'SELECT 1');
      assert.equal(p.status, 409);
      const r = await activeRequest();
      assert.equal((await query(r.id, 'SELECT 1', bob)).status, 404);
      const byAdmin = await query(r.id, 'SELECT 1', admin);
      assert.deepEqual([byAdmin.status, byAdmin.body.error], [404, 'not_found']);
      assert.match(
        String(byAdmin.body.message),
        new RegExp(`requester of request ${r.id}.*GET /v1/admin/requests/${r.id}`),
      );
      assert.equal(
        (await svc.call('POST', `/v1/requests/${r.id}/query`, { body: { sql: 'SELECT 1' } })).status,
        401,
      );
      const missing = await svc.call('POST', `/v1/requests/${r.id}/query`, { token: ana, body: {} });
      assert.equal(missing.status, 400);
    });

    test(`hostile corpus: ${HOSTILE_SQL.length} statements, each refused with 4xx and nothing changed`, async () => {
      assert.ok(HOSTILE_SQL.length >= 50);
      const r = await activeRequest();
      const count = async () =>
        (
          await queryRows(
            db(),
            sql`SELECT (SELECT count(*) FROM demo.orders)::int + (SELECT count(*) FROM demo.customers)::int AS n`,
          )
        )[0]?.n;
      const before = await count();
      for (const text of HOSTILE_SQL) {
        const res = await query(r.id, text);
        assert.ok(res.status >= 400 && res.status < 500, `${text} → ${res.status} ${res.text}`);
      }
      assert.equal(await count(), before);
      const still = await query(r.id, 'SELECT count(*) FROM eu_orders');
      assert.equal(still.status, 200);
      const [tables] = await queryRows(
        db(),
        sql`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'x'`,
      );
      assert.equal(tables?.n, 0);
      const view = await svc.call('GET', `/v1/requests/${r.id}`, { token: ana });
      const refused = (view.body.data as RequestData).usage_events.filter((u) => u.action_type !== 'query');
      assert.ok(refused.length >= 50, 'refused and failed statements are recorded as usage events');
    });

    test('defence layers, each on its own (the SQL guard bypassed)', async (t) => {
      const r = await activeRequest();
      const { schema, role } = environmentNames(r.id);
      const session = roleSessionFor(svc.runtime.database);
      const code = async (p: Promise<unknown>) => {
        try {
          await p;
          return 'ok';
        } catch (err) {
          if (err instanceof EnvironmentInactiveError) return 'inactive';
          return databaseError(err).code ?? (err as Error).message;
        }
      };
      const as = (who: string, where: string, statement: string, timeoutMs = 5000) =>
        session(statement, { role: who, schema: where, timeoutMs });
      // Least-privilege role: the base tables and the service's own tables are out of reach.
      assert.equal(await code(as(role, schema, 'SELECT * FROM demo.customers')), '42501');
      assert.equal(await code(as(role, schema, 'SELECT * FROM public.users')), '42501');
      assert.equal(await code(as(role, schema, 'SELECT * FROM eu_orders')), 'ok');
      // search_path: the request's schema first, then the catalogs, then pg_temp; information_schema is not on it.
      const path = await session('SELECT current_setting($$search_path$$)', {
        role,
        schema,
        timeoutMs: 5000,
      });
      assert.equal(String(path.rows[0]?.[0]).replaceAll('"', ''), `${schema}, pg_catalog, pg_temp`);
      assert.equal(await code(as(role, schema, 'SELECT count(*) FROM tables')), '42P01');
      // Read-only transaction: even a privileged role cannot write inside it.
      const [me] = await queryRows(db(), sql`SELECT current_user::text AS u`);
      assert.equal(
        await code(as(me?.u as string, 'public', 'CREATE TABLE public.layer_test (a int)')),
        '25006',
      );
      assert.equal(await code(as(me?.u as string, 'public', "UPDATE demo.orders SET status = 'x'")), '25006');
      // Extended protocol: one statement per message, so COMMIT cannot end the read-only transaction.
      const multi = await code(as(role, schema, 'SELECT 1; COMMIT; CREATE TABLE escaped (a int)'));
      assert.notEqual(multi, 'ok');
      const [escaped] = await queryRows(
        db(),
        sql`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'escaped'`,
      );
      assert.equal(escaped?.n, 0);
      // The status gate: the role is assumed only while the request is active, checked in the same transaction.
      const gated = (statement: string) =>
        session(statement, { role, schema, timeoutMs: 5000, requestId: r.id });
      assert.equal(await code(gated('SELECT count(*) FROM eu_orders')), 'ok');
      assert.equal((await query(r.id, 'SELECT 1')).status, 200, 'the proxy keeps the request’s fixed parts');
      const unknown = session('SELECT 1', { role, schema, timeoutMs: 5000, requestId: randomUUID() });
      assert.equal(await code(unknown), 'inactive', 'a request that does not exist is not active');
      await db().execute(sql`UPDATE requests SET status = 'expired' WHERE id = ${r.id}::uuid`);
      assert.equal(await code(gated('SELECT count(*) FROM eu_orders')), 'inactive');
      // The proxy, which may have kept the request's fixed parts, answers 409 from the same check.
      const late = await query(r.id, 'SELECT count(*) FROM eu_orders');
      assert.equal(late.status, 409, late.text);
      assert.match(String(late.body.message), /expired/);
      await db().execute(sql`UPDATE requests SET status = 'active' WHERE id = ${r.id}::uuid`);
      assert.equal((await query(r.id, 'SELECT count(*) FROM eu_orders')).status, 200);
      // Statement timeout (PGlite runs single-threaded without timers: the guard and the plan-cost check stand in).
      if (driver === 'pglite') {
        t.diagnostic('statement_timeout is not enforced by PGlite; covered on PostgreSQL');
      } else {
        assert.equal(await code(as(role, schema, 'SELECT pg_sleep(2)', 200)), '57014');
      }
    });

    test('row cap: results are capped in rows and bytes and flagged truncated', async () => {
      const r = await activeRequest();
      const row = await findRequest(db(), r.id);
      assert.ok(row);
      const provider = createBuiltinProvider(svc.runtime.database);
      const capped = await runQuery(
        svc.runtime.database,
        provider,
        { statementTimeoutMs: 5000, maxRows: 5, maxBytes: 1024 * 1024 },
        r.id,
        'SELECT * FROM eu_orders ORDER BY id',
        anaPrincipal(),
        '127.0.0.1',
      );
      assert.equal(capped.row_count, 5);
      assert.equal(capped.rows.length, 5);
      assert.equal(capped.truncated, true);
      const bytes = await runQuery(
        svc.runtime.database,
        provider,
        { statementTimeoutMs: 5000, maxRows: 1000, maxBytes: 100 },
        r.id,
        'SELECT * FROM eu_orders',
        anaPrincipal(),
        '127.0.0.1',
      );
      assert.ok(bytes.row_count >= 1 && bytes.row_count < 4 && bytes.truncated, JSON.stringify(bytes.rows));
      const exact = await runQuery(
        svc.runtime.database,
        provider,
        { statementTimeoutMs: 5000, maxRows: 3, maxBytes: 1024 * 1024 },
        r.id,
        'SELECT id FROM products ORDER BY id LIMIT 3',
        anaPrincipal(),
        '127.0.0.1',
      );
      assert.equal(exact.truncated, false);
      assert.deepEqual(exact.rows, [[1], [2], [3]]);
    });

    test('bytes are capped while fetching: a large result stops at max_bytes, a row over max_bytes is refused', async () => {
      const r = await activeRequest();
      const provider = createBuiltinProvider(svc.runtime.database);
      const run = (text: string, maxRows: number, maxBytes: number) =>
        runQuery(
          svc.runtime.database,
          provider,
          { statementTimeoutMs: 5000, maxRows, maxBytes },
          r.id,
          text,
          anaPrincipal(),
          '::1',
        );
      // Thousands of rows of ~80 bytes against a 4 KiB budget.
      const big = await run('SELECT a.*, b.id AS b_id FROM eu_orders a, eu_orders b', 100_000, 4096);
      assert.equal(big.truncated, true);
      assert.ok(big.row_count > 10, String(big.row_count));
      assert.ok(Buffer.byteLength(JSON.stringify(big.rows)) <= 4096);
      // One row larger than max_bytes fails in the database before it is sent.
      await assert.rejects(run("SELECT string_agg(status || region, ',') FROM eu_orders", 1000, 200), {
        code: 'result_row_too_large',
      });
      // Padding is bounded by the guard; at the bound it runs.
      const padded = await run("SELECT lpad(status, 10000, '.') FROM eu_orders LIMIT 1", 10, 1 << 20);
      assert.equal(String(padded.rows[0]?.[0]).length, 10_000);
      const huge = await query(r.id, "SELECT lpad(status, 100000000, '.') FROM eu_orders");
      assert.equal(huge.body.error, 'sql_refused');
    });

    test('a heavy query cannot wedge the service: refused before it runs (PGlite) or stopped by the statement timeout', async () => {
      const r = await activeRequest();
      const provider = createBuiltinProvider(svc.runtime.database);
      const heavy = 'SELECT count(*) FROM eu_orders a, eu_orders b, eu_orders c, eu_orders d, eu_orders e';
      const forever =
        'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n';
      const started = Date.now();
      if (driver === 'pglite') {
        // No statement_timeout on PGlite: what combines relations is planned first and refused above a cost.
        const res = await query(r.id, heavy);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error, 'query_too_expensive');
        assert.equal((await query(r.id, forever)).body.error, 'sql_refused');
        assert.equal(
          (await query(r.id, "SELECT count(*) FROM eu_orders WHERE status ~ '(a|aa)*b'")).status,
          400,
        );
        const fine = await query(r.id, 'SELECT count(*) FROM eu_orders a JOIN eu_orders b ON b.id = a.id');
        assert.equal(fine.status, 200, fine.text);
      } else {
        const limits = { statementTimeoutMs: 300, maxRows: 100, maxBytes: 1 << 20 };
        for (const text of [heavy, forever]) {
          await assert.rejects(
            runQuery(svc.runtime.database, provider, limits, r.id, text, anaPrincipal(), '::1'),
            {
              code: 'query_timeout',
            },
          );
        }
      }
      assert.ok(Date.now() - started < 10_000);
      assert.equal((await query(r.id, 'SELECT count(*) FROM eu_orders')).status, 200, 'still serving');
    });

    test('dataset and column names are lower case in the environment, read with plain SQL', async () => {
      const scope = {
        datasources: [
          {
            datasets: [
              {
                namespace: 'EuOrders',
                source: { kind: 'postgres', name: 'demo', table: 'orders' },
                columns: ['id', 'Total', 'customers.Country'],
                joins: [
                  {
                    namespace: 'Customers',
                    on: 'orders.customer_id = customers.id',
                    source: { kind: 'postgres', name: 'demo', table: 'customers' },
                  },
                ],
              },
            ],
          },
        ],
      };
      // Source columns keep their exact case (demo's are lower case, so `Total` and `Country` do not exist there).
      const failing = await createAs(ana, scope);
      const approved = await svc.call('POST', `/v1/admin/requests/${failing.id}/approve`, { token: admin });
      assert.equal((approved.body.data as RequestData).environment_status, 'failed');
      const ok = await createAs(ana, {
        datasources: [
          {
            datasets: [
              {
                ...scope.datasources[0]?.datasets[0],
                columns: ['id', 'total', 'customers.country', 'ordered_at'],
              },
            ],
          },
        ],
      });
      const res = await svc.call('POST', `/v1/admin/requests/${ok.id}/approve`, { token: admin });
      assert.equal((res.body.data as RequestData).status, 'active', res.text);
      for (const text of [
        'SELECT id, total, customers_country FROM EuOrders LIMIT 1',
        'select ID, TOTAL, Customers_Country from euorders limit 1',
        `SELECT count(*) FROM ${environmentNames(ok.id).schema}.EUORDERS`,
      ]) {
        const q = await query(ok.id, text);
        assert.equal(q.status, 200, `${text}: ${q.text}`);
      }
      const cols = await query(ok.id, 'SELECT * FROM euorders LIMIT 1');
      assert.deepEqual(
        (cols.body.data as QueryData).columns.map((c) => `${c.name}:${c.type}`),
        ['id:int4', 'total:numeric', 'customers_country:text', 'ordered_at:timestamptz'],
      );
      // Values come out the same on every driver: numeric as text, instants as ISO 8601 UTC with milliseconds.
      const first = await query(ok.id, 'SELECT * FROM euorders ORDER BY id LIMIT 1');
      const [expected] = await queryRows(
        db(),
        sql`SELECT o.id, o.total::text AS total, c.country,
              to_char(o.ordered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
            FROM demo.orders o JOIN demo.customers c ON c.id = o.customer_id ORDER BY o.id LIMIT 1`,
      );
      assert.deepEqual((first.body.data as QueryData).rows[0], [
        expected?.id,
        expected?.total,
        expected?.country,
        expected?.at,
      ]);
      // A quoted mixed-case name names no view of this request.
      assert.equal((await query(ok.id, 'SELECT * FROM "EuOrders"')).body.error, 'sql_refused');
      // Two columns that would be the same view column are refused when the request is made.
      const clash = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: {
          title: 'clash',
          scope: {
            datasources: [
              {
                datasets: [
                  {
                    namespace: 'o',
                    source: { kind: 'postgres', name: 'demo', table: 'orders' },
                    columns: ['id', 'ID'],
                  },
                ],
              },
            ],
          },
        },
      });
      assert.equal(clash.status, 400);
      assert.match(String(clash.body.message), /same view column/);
    });

    test('use_count counts the queries, concurrent ones included, without rewriting the request', async () => {
      const r = await activeRequest();
      const before = (await findRequest(db(), r.id))?.updatedAt.getTime();
      const results = await Promise.all(
        Array.from({ length: 8 }, () => query(r.id, 'SELECT count(*) FROM products')),
      );
      assert.ok(results.every((x) => x.status === 200));
      assert.equal((await query(r.id, 'SELECT nope FROM products')).status, 400);
      const view = (await svc.call('GET', `/v1/requests/${r.id}`, { token: ana })).body.data as RequestData;
      assert.equal(view.tunnel?.credentials[0]?.use_count, 8, 'failed queries are not uses');
      const [last] = await queryRows(
        db(),
        sql`SELECT to_char(max(timestamp) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS t
            FROM request_usage_events WHERE request_id = ${r.id}::uuid AND action_type = 'query'`,
      );
      assert.equal(view.tunnel?.credentials[0]?.last_used_at, last?.t);
      assert.equal((await findRequest(db(), r.id))?.updatedAt.getTime(), before);
      const listed = await svc.call('GET', '/v1/requests?limit=100', { token: ana });
      const mine = (listed.body.data as { requests: RequestData[] }).requests.find((x) => x.id === r.id);
      assert.equal(mine?.tunnel?.credentials[0]?.use_count, 8);
    });

    test('usage events: every one of a request, paginated and filtered, for its requester or an admin; anyone else 404', async () => {
      const r = await activeRequest();
      for (let i = 1; i <= 5; i++) {
        assert.equal((await query(r.id, `SELECT id FROM products ORDER BY id LIMIT ${i}`)).status, 200);
      }
      assert.equal((await query(r.id, 'SELECT nope FROM products')).status, 400);
      assert.equal((await query(r.id, 'DELETE FROM products')).status, 400);
      const list = (q: string, token = ana) =>
        svc.call('GET', `/v1/requests/${r.id}/usage-events${q}`, { token });
      type Page = {
        usage_events: Array<{ id: string; action_type: string; timestamp: string; metadata: Json }>;
        total: number;
        limit: number;
        offset: number;
      };
      const [stored] = await queryRows(
        db(),
        sql`SELECT count(*)::int AS n, (count(*) FILTER (WHERE action_type = 'query'))::int AS q
            FROM request_usage_events WHERE request_id = ${r.id}::uuid`,
      );
      assert.equal(stored?.n, 7);
      const all = await list('?limit=100');
      assert.equal(all.status, 200, all.text);
      const page = all.body.data as Page;
      assert.equal(page.total, stored?.n);
      assert.equal(page.usage_events.length, stored?.n);
      const times = page.usage_events.map((u) => u.timestamp);
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first by default');
      // Two pages of 4, oldest first, make up the same events.
      const first = (await list('?sort=timestamp&limit=4')).body.data as Page;
      const second = (await list('?sort=timestamp&limit=4&offset=4')).body.data as Page;
      assert.deepEqual(
        [...first.usage_events, ...second.usage_events].map((u) => u.id),
        page.usage_events.map((u) => u.id).reverse(),
      );
      const executed = (await list('?action_type=query')).body.data as Page;
      assert.equal(executed.total, stored?.q);
      assert.deepEqual(
        executed.usage_events.map((u) => u.metadata.row_count),
        [5, 4, 3, 2, 1],
      );
      const refused = (await list('?action_type=query_refused')).body.data as Page;
      assert.equal(refused.total, 1);
      // The admin sees them; another user does not see the request at all; bad parameters are 400.
      assert.equal(((await list('', admin)).body.data as Page).total, stored?.n);
      assert.equal((await list('', bob)).status, 404);
      assert.equal(
        (await svc.call('GET', `/v1/requests/${randomUUID()}/usage-events`, { token: ana })).status,
        404,
      );
      for (const bad of ['?limit=101', '?action_type=select', '?sort=id', '?page=2']) {
        const res = await list(bad);
        assert.equal(res.status, 400, `${bad}: ${res.text}`);
        assert.equal((res.body as { error: string }).error, 'validation_failed');
      }
    });

    test('no rows without their usage event: when it cannot be written the query answers 503 with no data; the next query works', async () => {
      const r = await activeRequest();
      // The usage table refuses this request's query events, as a lock timeout on it would.
      await db().execute(
        sql.raw(`CREATE FUNCTION test_refuse_usage() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.request_id = '${r.id}' AND NEW.action_type = 'query' THEN
              RAISE EXCEPTION 'usage store locked' USING ERRCODE = '55P03';
            END IF;
            RETURN NEW;
          END $$`),
      );
      await db().execute(
        sql.raw(`CREATE TRIGGER test_refuse_usage BEFORE INSERT ON request_usage_events
          FOR EACH ROW EXECUTE FUNCTION test_refuse_usage()`),
      );
      try {
        const refused = await query(r.id, 'SELECT id, name FROM products ORDER BY id');
        assert.equal(refused.status, 503, refused.text);
        assert.equal((refused.body as { error: string }).error, 'database_busy');
        assert.doesNotMatch(refused.text, /Sensor|Gateway|Cable/, 'none of the rows reached the answer');
      } finally {
        await db().execute(sql.raw('DROP TRIGGER test_refuse_usage ON request_usage_events'));
        await db().execute(sql.raw('DROP FUNCTION test_refuse_usage()'));
      }
      const [stored] = await queryRows(
        db(),
        sql`SELECT count(*)::int AS n FROM request_usage_events WHERE request_id = ${r.id}::uuid`,
      );
      assert.equal(stored?.n, 0, 'nothing was recorded, and nothing was answered');
      // Nothing is left broken: the next queries run and are recorded.
      for (let i = 0; i < 3; i++) {
        const ok = await query(r.id, 'SELECT id, name FROM products ORDER BY id LIMIT 2');
        assert.equal(ok.status, 200, ok.text);
        assert.equal((ok.body.data as QueryData).row_count, 2);
      }
      const view = (await svc.call('GET', `/v1/requests/${r.id}`, { token: ana })).body.data as RequestData;
      assert.equal(view.tunnel?.credentials[0]?.use_count, 3);
    });

    test('a failed provisioning is visible and an admin retries it', async () => {
      const scope = {
        datasources: [
          {
            datasets: [
              {
                namespace: 'later',
                source: { kind: 'postgres', name: 'demo', table: 'later' },
                columns: ['id'],
              },
            ],
          },
        ],
      };
      const r = await createAs(ana, scope);
      const retryEarly = await svc.call('POST', `/v1/admin/requests/${r.id}/provision`, { token: admin });
      assert.equal(retryEarly.status, 409);
      const res = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin });
      const failed = res.body.data as RequestData;
      assert.equal(failed.status, 'approved');
      assert.equal(failed.environment_status, 'failed');
      assert.match(String(failed.tunnel?.last_error), /no catalog entry for demo\.later/);
      assert.equal((await query(r.id, 'SELECT 1')).status, 409);

      const entry = await svc.call('POST', '/v1/admin/catalog', {
        token: admin,
        body: {
          datasource_id: 'demo',
          datasource_name: 'demo',
          target_name: 'later',
          target_location: 'demo.products',
        },
      });
      assert.equal(entry.status, 201);
      assert.equal(
        (await svc.call('POST', `/v1/admin/requests/${r.id}/provision`, { token: ana })).status,
        403,
      );
      const retried = await svc.call('POST', `/v1/admin/requests/${r.id}/provision`, { token: admin });
      assert.equal(retried.status, 200, retried.text);
      assert.equal((retried.body.data as RequestData).status, 'active');
      assert.equal((await query(r.id, 'SELECT count(*) FROM later')).status, 200);
      const logs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?resource_id=${r.id}&action_type=environment.provision_failed`,
        {
          token: admin,
        },
      );
      const failures = (logs.body.data as { logs: Array<{ source: string; level: string }> }).logs;
      assert.equal(failures.length, 1);
      assert.equal(failures[0]?.source, 'env-svc');
      assert.equal(failures[0]?.level, 'error');
    });

    test('a catalog entry pointing into the service’s own schema is refused at provisioning', async () => {
      await svc.call('POST', '/v1/admin/catalog', {
        token: admin,
        body: {
          datasource_id: 'evil',
          datasource_name: 'evil',
          target_name: 'users',
          target_location: 'public.users',
        },
      });
      const r = await createAs(ana, {
        datasources: [
          {
            datasets: [
              {
                namespace: 'u',
                source: { kind: 'postgres', name: 'evil', table: 'users' },
                columns: ['email'],
              },
            ],
          },
        ],
      });
      const res = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin });
      const data = res.body.data as RequestData;
      assert.equal(data.environment_status, 'failed');
      assert.match(String(data.tunnel?.last_error), /may not read/);
    });

    test('expiry: past valid_until the scheduled function expires the request and tears its environment down', async () => {
      const r = await activeRequest();
      const { schema, role } = environmentNames(r.id);
      const pending = await createAs(ana);
      await db().execute(
        sql`UPDATE requests SET valid_until = now() - interval '1 minute' WHERE id IN (${r.id}::uuid, ${pending.id}::uuid)`,
      );
      const result = (await expireHandler()) as { expired: string[]; torn_down: string[] };
      assert.ok(result.expired.includes(r.id));
      assert.ok(result.torn_down.includes(r.id));
      assert.ok(
        !result.expired.includes(pending.id),
        'pending requests are not expired (they were never granted)',
      );
      const view = await svc.call('GET', `/v1/requests/${r.id}`, { token: ana });
      const data = view.body.data as RequestData;
      assert.equal(data.status, 'expired');
      assert.equal(data.environment_status, 'torn_down');
      assert.deepEqual(await exists(schema, role), { schema: false, role: false });
      assert.equal((await query(r.id, 'SELECT 1')).status, 409);
      const revoke = await svc.call('POST', `/v1/requests/${r.id}/revoke`, { token: ana });
      assert.equal(revoke.status, 400);
      const again = (await expireHandler()) as { expired: string[] };
      assert.ok(!again.expired.includes(r.id));
      const logs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?resource_id=${r.id}&action_type=request.expired`,
        {
          token: admin,
        },
      );
      assert.equal((logs.body.data as { total: number }).total, 1);
    });

    describe('http provider against a local environment service', () => {
      let server: Server;
      let url: string;
      let mode: 'ok' | 'error' | 'hang' | 'close' | 'garbage' | 'huge' | 'wide' = 'ok';
      const seen: Array<{ method: string; url: string; auth: string }> = [];
      before(async () => {
        server = createServer((req, res) => {
          seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization ?? '' });
          req.resume();
          req.on('end', () => {
            if (mode === 'hang') return;
            if (mode === 'close') {
              req.socket.destroy();
              return;
            }
            if (mode === 'error') {
              res
                .writeHead(500, { 'content-type': 'application/json' })
                .end('{"error":"internal stack trace"}');
              return;
            }
            if (mode === 'garbage') {
              res.writeHead(200).end('<html>');
              return;
            }
            if (req.method === 'POST' && req.url === '/environments') {
              res.writeHead(201, { 'content-type': 'application/json' }).end(
                JSON.stringify({
                  environment_id: 'ext-env-1',
                  tunnel: {
                    api_url: 'https://env.example/ext-env-1',
                    credentials: [{ id: 'c1', type: 'password', username: 'u1', secret_preview: 'ab…' }],
                  },
                }),
              );
            } else if (
              req.method === 'POST' &&
              req.url === '/environments/ext-env-1/query' &&
              mode !== 'ok'
            ) {
              // A service that ignores max_bytes: 'huge' sends 300 KB, 'wide' 50 rows of ~110 bytes.
              const n = mode === 'huge' ? 3000 : 50;
              res.writeHead(200, { 'content-type': 'application/json' }).end(
                JSON.stringify({
                  columns: [{ name: 'x', type: 'text' }],
                  rows: Array.from({ length: n }, (_, i) => [`${i}`.padEnd(100, 'x')]),
                  row_count: n,
                  truncated: false,
                  duration_ms: 1,
                }),
              );
            } else if (req.method === 'POST' && req.url === '/environments/ext-env-1/query') {
              res.writeHead(200, { 'content-type': 'application/json' }).end(
                JSON.stringify({
                  columns: [{ name: 'n', type: 'int8' }],
                  rows: [[1], [2]],
                  row_count: 2,
                  truncated: false,
                  duration_ms: 3,
                }),
              );
            } else {
              res.writeHead(204).end();
            }
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });
      after(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      const ENVSVC_TOKEN = randomSecret();
      const provider = () => createHttpProvider({ url, token: ENVSVC_TOKEN, timeoutMs: 300 });
      const approved = async () => {
        const r = await createAs(ana);
        return approveRequest(db(), r.id, undefined, adminPrincipal, '127.0.0.1');
      };
      const statusOf = async (p: Promise<unknown>) => {
        try {
          await p;
          return 0;
        } catch (err) {
          assert.ok(err instanceof ServiceError, String(err));
          return STATUS_OF_KIND[err.kind];
        }
      };

      test('errors are 502, hangs and closed connections 503; the request stays approved with the failure visible', async () => {
        for (const [m, expected] of [
          ['error', 502],
          ['garbage', 502],
          ['hang', 503],
          ['close', 503],
        ] as const) {
          mode = m;
          const row = await approved();
          const started = Date.now();
          assert.equal(await statusOf(provisionEnvironment(db(), provider(), row)), expected, m);
          assert.ok(Date.now() - started < 3000, 'the timeout bounds the wait');
          const after = await findRequest(db(), row.id);
          assert.equal(after?.status, 'approved', m);
          assert.equal(after?.environmentStatus, 'failed');
          const tunnel = after?.tunnel as { last_error: string };
          assert.ok(tunnel.last_error.length > 0);
          assert.ok(!tunnel.last_error.includes('stack trace'), 'the service’s error body is not passed on');
        }
        const down = createHttpProvider({ url: 'http://127.0.0.1:1', token: 't', timeoutMs: 300 });
        assert.equal(await statusOf(provisionEnvironment(db(), down, await approved())), 503);
      });

      test('provision and query through the service; query failures are 502/503 and leave the request active', async () => {
        mode = 'ok';
        const row = await approved();
        const active = await provisionEnvironment(db(), provider(), row);
        assert.equal(active.status, 'active');
        assert.equal(active.environmentId, 'ext-env-1');
        assert.equal(seen.at(-1)?.auth, `Bearer ${ENVSVC_TOKEN}`);
        const limits = { statementTimeoutMs: 1000, maxRows: 100, maxBytes: 1 << 20 };
        const result = await runQuery(
          svc.runtime.database,
          provider(),
          limits,
          row.id,
          'SELECT count(*) FROM eu_orders',
          anaPrincipal(),
          '::1',
        );
        assert.deepEqual(result.rows, [[1], [2]]);
        assert.equal(seen.at(-1)?.url, '/environments/ext-env-1/query');
        // max_bytes holds whatever the service sends: an answer past max_bytes + 64 KiB is not even read (502);
        // rows past max_bytes are capped and flagged.
        mode = 'huge';
        const small = { statementTimeoutMs: 1000, maxRows: 100_000, maxBytes: 1000 };
        assert.equal(
          await statusOf(
            runQuery(svc.runtime.database, provider(), small, row.id, 'SELECT 1', anaPrincipal(), '::1'),
          ),
          502,
        );
        mode = 'wide';
        const wide = await runQuery(
          svc.runtime.database,
          provider(),
          small,
          row.id,
          'SELECT 1',
          anaPrincipal(),
          '::1',
        );
        assert.equal(wide.truncated, true);
        assert.ok(wide.row_count > 0 && wide.row_count < 10, String(wide.row_count));
        assert.ok(Buffer.byteLength(JSON.stringify(wide.rows)) <= 1000);
        for (const [m, expected] of [
          ['error', 502],
          ['hang', 503],
          ['close', 503],
        ] as const) {
          mode = m;
          assert.equal(
            await statusOf(
              runQuery(svc.runtime.database, provider(), limits, row.id, 'SELECT 1', anaPrincipal(), '::1'),
            ),
            expected,
          );
          assert.equal((await findRequest(db(), row.id))?.status, 'active');
        }
        mode = 'ok';
      });
    });
  });
}
