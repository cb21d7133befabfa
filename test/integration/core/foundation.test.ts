// The foundation through HTTP, as a dashboard or ops engineer uses it, on every database driver under test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { recordAudit, verifyAuditChain } from '#shared/audit/audit.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { startTestService, TEST_ADMIN, type TestService } from '#test/support/service.ts';

for (const driver of driversUnderTest()) {
  describe(`foundation on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    before(async () => {
      svc = await startTestService(driver);
      admin = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    test('migrations are recorded and a second run applies nothing', async () => {
      const second = await migrate(svc.runtime.database.db);
      assert.deepEqual(second.applied, []);
      const rows = await queryRows(
        svc.runtime.database.db,
        sql`SELECT name FROM schema_migrations ORDER BY name`,
      );
      // Every SQL file in migrations/ is recorded once, in order (listed here independently of the migrator).
      const files = readdirSync(new URL('../../../migrations/', import.meta.url))
        .filter((f) => f.endsWith('.sql'))
        .sort()
        .map((f) => f.slice(0, -'.sql'.length));
      assert.ok(files.length >= 3);
      assert.deepEqual(
        rows.map((r) => r.name),
        files,
      );
    });

    test('healthcheck reports ok with a live database check and a request id', async () => {
      const res = await svc.call('GET', '/v1/healthcheck');
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'ok');
      assert.equal((res.body.database as { status: string }).status, 'ok');
      assert.equal((res.body.database as { driver: string }).driver, driver);
      assert.equal(typeof (res.body.database as { latency_ms: number }).latency_ms, 'number');
      assert.equal(res.body.cli_signin, 'disabled');
      assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });

    test('the background probe stores its result and the healthcheck shows it', async () => {
      await svc.runSchedule('healthProbe');
      const res = await svc.call('GET', '/v1/healthcheck');
      const probe = res.body.last_probe as { status: string; checks: { database: { status: string } } };
      assert.equal(probe.status, 'ok');
      assert.equal(probe.checks.database.status, 'ok');
    });

    test('login: right password gives a token, wrong password is 401 invalid_credentials', async () => {
      const good = await svc.call('POST', '/v1/auth/login', { body: TEST_ADMIN });
      assert.equal(good.status, 200);
      const data = good.body.data as {
        token_type: string;
        expires_in: number;
        user: { email: string; roles: string[] };
      };
      assert.equal(good.body.success, true);
      assert.equal(data.token_type, 'Bearer');
      assert.equal(data.expires_in, 3600);
      assert.deepEqual(data.user.roles.sort(), ['admin', 'user']);
      const bad = await svc.call('POST', '/v1/auth/login', {
        body: { ...TEST_ADMIN, password: 'wrong password!' },
      });
      assert.equal(bad.status, 401);
      assert.deepEqual(Object.keys(bad.body).sort(), ['error', 'message']);
      assert.equal(bad.body.error, 'invalid_credentials');
      const unknown = await svc.call('POST', '/v1/auth/login', {
        body: { email: 'nobody@x.test', password: 'x' },
      });
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error, 'invalid_credentials');
    });

    test('bad input: malformed JSON, wrong content type and a missing field are 400 with a named field', async () => {
      const malformed = await svc.call('POST', '/v1/auth/login', { body: '{"email": ' });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error, 'invalid_json');
      const textPlain = await svc.call('POST', '/v1/auth/login', {
        body: JSON.stringify(TEST_ADMIN),
        headers: { 'content-type': 'text/plain' },
      });
      assert.equal(textPlain.status, 400);
      assert.equal(textPlain.body.error, 'invalid_content_type');
      const missing = await svc.call('POST', '/v1/auth/login', { body: { email: TEST_ADMIN.email } });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error, 'validation_failed');
      assert.match(String(missing.body.message), /password/);
    });

    test('me returns the caller; no token is 401, a forged token is 401', async () => {
      const me = await svc.call('GET', '/v1/me', { token: admin });
      assert.equal(me.status, 200);
      assert.equal((me.body.data as { email: string }).email, TEST_ADMIN.email);
      const none = await svc.call('GET', '/v1/me');
      assert.equal(none.status, 401);
      assert.equal(none.body.error, 'unauthorized');
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      const forged = await svc.call('GET', '/v1/me', { token: `${admin.slice(0, -4)}AAAA` });
      assert.equal(forged.status, 401);
      assert.equal(forged.body.error, 'invalid_token');
    });

    test('admin creates a user (audited in the same transaction); the user is forbidden from admin routes', async () => {
      const created = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email: 'ana@example.test', name: 'Ana', password: 'a long enough password', roles: ['user'] },
      });
      assert.equal(created.status, 201);
      const user = created.body.data as { id: string; email: string; roles: string[] };
      assert.deepEqual(user.roles, ['user']);

      const dup = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email: 'ANA@example.test', password: 'a long enough password' },
      });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.error, 'email_taken');

      const login = await svc.call('POST', '/v1/auth/login', {
        body: { email: 'ana@example.test', password: 'a long enough password' },
      });
      const userToken = (login.body.data as { access_token: string }).access_token;
      const forbidden = await svc.call('GET', '/v1/admin/users', { token: userToken });
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.body.error, 'forbidden');
      const noAuth = await svc.call('GET', '/v1/admin/audit-logs');
      assert.equal(noAuth.status, 401);

      const logs = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=user.created&resource_id=${user.id}`,
        {
          token: admin,
        },
      );
      assert.equal(logs.status, 200);
      const data = logs.body.data as {
        logs: Array<Record<string, unknown>>;
        total: number;
        limit: number;
        offset: number;
      };
      assert.equal(data.total, 1);
      assert.equal(data.limit, 20);
      assert.equal(data.offset, 0);
      assert.equal(data.logs[0]?.actor_email, TEST_ADMIN.email);
      assert.equal(data.logs[0]?.source, 'api');
      assert.equal(data.logs[0]?.resource_type, 'user');
    });

    test('a refused write stores nothing: invalid user body leaves users and audit_logs unchanged', async () => {
      const count = async () =>
        queryRows(
          svc.runtime.database.db,
          sql`SELECT (SELECT count(*)::int FROM users) AS users, (SELECT count(*)::int FROM audit_logs) AS logs`,
        );
      const before = await count();
      const res = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email: 'not-an-email', password: 'short' },
      });
      assert.equal(res.status, 400);
      assert.match(String(res.body.message), /email/);
      assert.deepEqual(await count(), before);
    });

    test('audit logs: filters, sort, default and maximum limit', async () => {
      for (let i = 0; i < 3; i++) {
        const r = await svc.call('POST', '/v1/admin/users', {
          token: admin,
          body: { email: `bulk${i}@example.test`, password: 'a long enough password' },
        });
        assert.equal(r.status, 201);
      }
      const asc = await svc.call('GET', '/v1/admin/audit-logs?sort=created_at&limit=2', { token: admin });
      const desc = await svc.call('GET', '/v1/admin/audit-logs?sort=-created_at&limit=2', { token: admin });
      const a = asc.body.data as { logs: Array<{ created_at: string }>; total: number };
      const d = desc.body.data as { logs: Array<{ created_at: string }>; total: number };
      assert.equal(a.logs.length, 2);
      assert.ok(a.logs[0]!.created_at <= a.logs[1]!.created_at);
      assert.ok(d.logs[0]!.created_at >= d.logs[1]!.created_at);
      assert.equal(a.total, d.total);
      assert.ok(a.total >= 5);
      const page2 = await svc.call('GET', '/v1/admin/audit-logs?sort=created_at&limit=2&offset=2', {
        token: admin,
      });
      assert.notEqual((page2.body.data as { logs: Array<{ id: string }> }).logs[0]?.id, a.logs[0]);
      const bySource = await svc.call('GET', '/v1/admin/audit-logs?source=env-svc', { token: admin });
      assert.equal((bySource.body.data as { total: number }).total, 0);
      const max = await svc.call('GET', '/v1/admin/audit-logs?limit=100', { token: admin });
      assert.equal(max.status, 200);
      // The spec lists no 400 here: limit and offset are capped (the answer says what was applied), an unknown
      // source matches nothing, an unknown sort is the default (-created_at), an empty filter is no filter.
      const logs = async (q: string) => {
        const res = await svc.call('GET', `/v1/admin/audit-logs?${q}`, { token: admin });
        assert.equal(res.status, 200, `${q}: ${res.text}`);
        return res.body.data as { logs: Array<{ id: string }>; total: number; limit: number; offset: number };
      };
      const capped = await logs('limit=101&offset=-4');
      assert.deepEqual([capped.limit, capped.offset], [100, 0]);
      assert.deepEqual([(await logs('limit=0')).limit, (await logs('limit=abc&offset=x')).limit], [1, 20]);
      const unknownSource = await logs('source=elsewhere');
      assert.deepEqual([unknownSource.total, unknownSource.logs.length], [0, 0]);
      assert.deepEqual(
        (await logs('sort=name&limit=5')).logs.map((l) => l.id),
        (await logs('sort=-created_at&limit=5')).logs.map((l) => l.id),
      );
      assert.equal((await logs('action_type=&actor_email=&resource_id=')).total, a.total);
    });

    test('audit logs: resources by name, routine records hidden on request, the action types counted', async () => {
      const db = svc.runtime.database.db;
      const email = `named-${Date.now()}@example.test`;
      const created = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, password: 'a long enough password' },
      });
      assert.equal(created.status, 201);
      const userId = (created.body.data as { id: string }).id;
      // A routine record, as a laptop's first registration writes it (through the audit insert of the domain).
      await recordAudit(db, {
        actionType: 'device.registered',
        actor: { id: userId, email, ipAddress: '' },
        resourceType: 'device',
        resourceId: randomUUID(),
      });
      type Log = { action_type: string; resource_id: string; resource_name: string | null };
      const list = async (q: string) => {
        const res = await svc.call('GET', `/v1/admin/audit-logs?limit=100&${q}`, { token: admin });
        assert.equal(res.status, 200, res.text);
        return res.body.data as { logs: Log[]; total: number };
      };
      const [named] = (await list(`resource_id=${userId}`)).logs;
      assert.deepEqual([named?.action_type, named?.resource_name], ['user.created', email]);
      const gone = (await list('action_type=device.registered')).logs;
      assert.ok(gone.length >= 1);
      assert.ok(
        gone.every((l) => l.resource_name === null),
        'a device that does not exist names nothing',
      );
      const all = await list('');
      const hidden = await list('routine=hide');
      const routine = new Set(['device.registered', 'device.key_rotated', 'events.partition_dropped']);
      const [counted] = await queryRows(
        db,
        sql`SELECT count(*)::int AS n FROM audit_logs
          WHERE action_type NOT IN ('device.registered', 'device.key_rotated', 'events.partition_dropped')`,
      );
      assert.equal(hidden.total, counted?.n);
      assert.ok(hidden.total < all.total);
      assert.ok(hidden.logs.every((l) => !routine.has(l.action_type)));
      assert.equal((await list('routine=whatever')).total, all.total, 'another value is the default');
      const actions = await svc.call('GET', '/v1/admin/audit-logs/actions', { token: admin });
      assert.equal(actions.status, 200, actions.text);
      const byDatabase = await queryRows(
        db,
        sql`SELECT action_type, count(*)::int AS records FROM audit_logs GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual((actions.body.data as { actions: unknown[] }).actions, byDatabase);
      const refused = await svc.call('GET', '/v1/admin/audit-logs/actions');
      assert.equal(refused.status, 401);
    });

    test('audit records cannot be updated or deleted (the database refuses)', async () => {
      const db = svc.runtime.database.db;
      await assert.rejects(db.execute(sql`UPDATE audit_logs SET actor_email = 'mallory'`));
      await assert.rejects(db.execute(sql`DELETE FROM audit_logs`));
      const [row] = await queryRows(
        db,
        sql`SELECT count(*)::int AS n FROM audit_logs WHERE actor_email = 'mallory'`,
      );
      assert.equal(row?.n, 0);
    });

    test('the audit chain holds under concurrent writers and detects a row changed behind the service', async () => {
      const db = svc.runtime.database.db;
      const writes = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          svc.call('POST', '/v1/admin/users', {
            token: admin,
            body: { email: `chain${i}@example.test`, password: 'a long enough password' },
          }),
        ),
      );
      assert.deepEqual(
        writes.map((w) => w.status),
        writes.map(() => 201),
      );
      const intact = await verifyAuditChain(db);
      assert.equal(intact.intact, true);
      assert.ok(intact.checked >= 17);
      const seqs = await queryRows(db, sql`SELECT seq::int AS seq, prev_hash FROM audit_logs ORDER BY seq`);
      assert.equal(seqs[0]?.prev_hash, '');
      assert.equal(new Set(seqs.map((r) => r.seq)).size, seqs.length);

      // Someone with database access edits a record, bypassing the append-only trigger.
      await db.execute(sql`ALTER TABLE audit_logs DISABLE TRIGGER audit_logs_no_update_delete`);
      const [victim] = await queryRows(
        db,
        sql`SELECT id::text AS id FROM audit_logs ORDER BY seq LIMIT 1 OFFSET 3`,
      );
      await db.execute(
        sql`UPDATE audit_logs SET actor_email = 'mallory@example.test' WHERE id = ${victim?.id}::uuid`,
      );
      await db.execute(sql`ALTER TABLE audit_logs ENABLE TRIGGER audit_logs_no_update_delete`);
      const broken = await verifyAuditChain(db);
      assert.equal(broken.intact, false);
      assert.equal(broken.broken_at?.id, victim?.id);
      assert.equal(broken.checked, 3);
    });

    test('users list is paginated', async () => {
      const res = await svc.call('GET', '/v1/admin/users?limit=2', { token: admin });
      const data = res.body.data as { users: unknown[]; total: number; limit: number };
      assert.equal(data.users.length, 2);
      assert.equal(data.limit, 2);
      assert.ok(data.total >= 5);
    });

    test('OpenAPI document is served and lists every mounted route', async () => {
      const res = await svc.call('GET', '/v1/openapi.json');
      assert.equal(res.status, 200);
      assert.equal(res.body.openapi, '3.1.0');
      const paths = res.body.paths as Record<string, Record<string, unknown>>;
      for (const mounted of svc.emulator.mounted) {
        const [method, path] = mounted.split(' ') as [string, string];
        assert.ok(paths[path]?.[method.toLowerCase()], `${mounted} in OpenAPI`);
      }
      // A route on the database documents 503 (database_unavailable, database_busy); the document itself does not.
      const responses = (path: string, method: string) =>
        Object.keys((paths[path]?.[method] as { responses?: Record<string, unknown> })?.responses ?? {});
      assert.ok(responses('/v1/devices/events', 'post').includes('503'));
      assert.ok(responses('/v1/admin/users', 'get').includes('503'));
      assert.ok(!responses('/v1/openapi.json', 'get').includes('503'));
    });

    test('unknown routes are 404 {error, message}; CORS preflight follows cors.allowed_origins', async () => {
      const missing = await svc.call('GET', '/v1/nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'not_found');
      const pre = await fetch(`${svc.url}/v1/admin/users`, {
        method: 'OPTIONS',
        headers: { origin: 'http://dashboard.test', 'access-control-request-method': 'POST' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), 'http://dashboard.test');
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /authorization/);
      const other = await fetch(`${svc.url}/v1/admin/users`, {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.test', 'access-control-request-method': 'POST' },
      });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const simple = await fetch(`${svc.url}/v1/healthcheck`, {
        headers: { origin: 'http://dashboard.test' },
      });
      assert.equal(simple.headers.get('access-control-allow-origin'), 'http://dashboard.test');
    });

    test('CLI sign-in routes are not mounted without a dashboard URL', async () => {
      const res = await svc.call('GET', '/v1/auth/cli/authorize');
      assert.equal(res.status, 404);
    });
  });
}
