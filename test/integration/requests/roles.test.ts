// No request's database role outlives its request, on every driver: the role goes with the revoke or the expiry, and
// when a crash cut the teardown short (the request ended, its role still there) the sweep finds it, on the expiry
// schedule and at the next start. On PostgreSQL, where roles are cluster-wide: one database's sweep leaves another
// database's live roles alone, and drops those a dropped database left.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { createBuiltinProvider } from '#shared/requests/environments/builtin/provider.ts';
import { environmentNames } from '#shared/requests/environments/builtin/view-sql.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { sweepEnvironments } from '#shared/requests/lifecycle.ts';
import { findRequest } from '#shared/requests/requests.ts';
import { driversUnderTest, testDatabaseUrl } from '#test/support/databases.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { randomSecret } from '#test/support/secrets.ts';
import {
  startCheckedService,
  startTestService,
  type TestService,
  testConfig,
  userToken,
} from '#test/support/service.ts';
import { allowServiceRole } from '../../../infra/functions/migrate.ts';

/** On PostgreSQL, serve as the database's service role, as npm start does (the test config turns it off). */
const AS_SERVICE = { db: { service_role: true } };

interface RequestData {
  id: string;
  status: string;
  environment_status: string | null;
}

for (const driver of driversUnderTest()) {
  describe(`request roles on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let user: string;
    const db = () => svc.runtime.database.db;
    /** This database's sweep (runSchedule runs on the runtime of the service started last). */
    const sweepHere = () => sweepEnvironments(db(), createBuiltinProvider(svc.runtime.database));

    /** Whether the request's role and schema exist, read from the catalogs (roles: the whole server's). */
    const leftOf = async (id: string) => {
      const { schema, role } = environmentNames(id);
      const [row] = await queryRows(
        db(),
        sql`SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = ${schema})::int AS s,
                   (SELECT count(*) FROM pg_roles WHERE rolname = ${role})::int AS r`,
      );
      return { schema: row?.s === 1, role: row?.r === 1 };
    };
    const activeRequest = async () => {
      const created = await svc.call('POST', '/v1/requests', { token: user, body: demoOrdersRequest() });
      assert.equal(created.status, 201, created.text);
      const id = (created.body.data as RequestData).id;
      const approved = await svc.call('POST', `/v1/admin/requests/${id}/approve`, { token: admin, body: {} });
      assert.equal((approved.body.data as RequestData).status, 'active', approved.text);
      assert.deepEqual(await leftOf(id), { schema: true, role: true });
      return id;
    };
    /** The request ended (its move committed) and the process died before the teardown ran. */
    const endedWithoutTeardown = (id: string, status: 'revoked' | 'expired') =>
      db().execute(sql`UPDATE requests SET status = ${status}, updated_at = now() WHERE id = ${id}::uuid`);
    const sweepAudits = async (id: string) =>
      (
        await queryRows(
          db(),
          sql`SELECT count(*)::int AS n FROM audit_logs WHERE resource_id = ${id}
                AND action_type = 'environment.torn_down' AND metadata ->> 'swept' = 'true'`,
        )
      )[0]?.n;

    before(async () => {
      svc = await startTestService(driver, AS_SERVICE);
      admin = await svc.adminToken();
      await seedDemoDatasource(db());
      user = await userToken(svc, 'rae@example.test', 'rae');
    });
    after(async () => {
      // What a test left active goes with its request, before the database (roles are cluster-wide).
      await db().execute(sql`UPDATE requests SET status = 'revoked' WHERE status IN ('approved', 'active')`);
      await sweepHere();
      await svc?.dispose();
    });

    test('a revoke drops the role and the schema with it; a denied request never had one', async () => {
      const id = await activeRequest();
      const revoked = await svc.call('POST', `/v1/requests/${id}/revoke`, { token: user });
      assert.equal(revoked.status, 200, revoked.text);
      assert.deepEqual(await leftOf(id), { schema: false, role: false });
      const created = await svc.call('POST', '/v1/requests', { token: user, body: demoOrdersRequest() });
      const denied = (created.body.data as RequestData).id;
      const deny = await svc.call('POST', `/v1/admin/requests/${denied}/deny`, {
        token: admin,
        body: { reason: 'not needed' },
      });
      assert.equal(deny.status, 200, deny.text);
      assert.deepEqual(await leftOf(denied), { schema: false, role: false });
    });

    test('a crash between the end of a request and its teardown: the expiry schedule sweeps the role', async () => {
      const revokedId = await activeRequest();
      const expiredId = await activeRequest();
      const live = await activeRequest();
      await endedWithoutTeardown(revokedId, 'revoked');
      await endedWithoutTeardown(expiredId, 'expired');
      assert.deepEqual(await leftOf(revokedId), { schema: true, role: true }, 'the crash left it');
      const result = (await svc.runSchedule('requestExpiry')) as { swept: string[] };
      assert.deepEqual([...result.swept].sort(), [revokedId, expiredId].sort());
      for (const id of [revokedId, expiredId]) {
        assert.deepEqual(await leftOf(id), { schema: false, role: false });
        assert.equal((await findRequest(db(), id))?.environmentStatus, 'torn_down');
        assert.equal(await sweepAudits(id), 1);
      }
      assert.deepEqual(await leftOf(live), { schema: true, role: true }, 'an active request keeps its role');
      const again = (await svc.runSchedule('requestExpiry')) as { swept: string[] };
      assert.deepEqual(again.swept, []);
    });

    test('an approved request whose environment is being provisioned keeps it; once expired, it goes', async () => {
      const created = await svc.call('POST', '/v1/requests', { token: user, body: demoOrdersRequest() });
      const id = (created.body.data as RequestData).id;
      // Approved, then provisioned, and the move to active not made yet (environment_id still empty).
      await db().execute(
        sql`UPDATE requests SET status = 'approved', approved_at = now(), approved_by = 'x' WHERE id = ${id}::uuid`,
      );
      const row = await findRequest(db(), id);
      assert.ok(row);
      await createBuiltinProvider(svc.runtime.database).provision(row);
      await svc.runSchedule('requestExpiry');
      assert.deepEqual(await leftOf(id), { schema: true, role: true });
      await db().execute(
        sql`UPDATE requests SET valid_until = now() - interval '1 minute' WHERE id = ${id}::uuid`,
      );
      const result = (await svc.runSchedule('requestExpiry')) as { expired: string[]; swept: string[] };
      assert.deepEqual(result.expired, [id]);
      assert.deepEqual(await leftOf(id), { schema: false, role: false });
    });

    test('a request that ended while the service was stopped: its role goes at the next start', async () => {
      const id = await activeRequest();
      await svc.stop();
      const config = testConfig({ db: { ...AS_SERVICE.db, dsn: svc.database.dsn } });
      // The service is down; the request ends (an operator, another instance) and nobody tears it down.
      const between = await startCheckedService({ config });
      await between.service.runtime.database.db.execute(
        sql`UPDATE requests SET status = 'revoked' WHERE id = ${id}::uuid`,
      );
      await between.service.stop();
      const { service } = await startCheckedService({ config });
      const database = svc.database;
      svc = {
        ...svc,
        ...service,
        dispose: async () => {
          await service.stop();
          await database.cleanup();
        },
      };
      assert.deepEqual(await leftOf(id), { schema: false, role: false });
      assert.equal((await findRequest(db(), id))?.environmentStatus, 'torn_down');
      assert.equal(await sweepAudits(id), 1);
    });

    if (driver === 'postgres') {
      test('the service connects as <database>_service: DML and the owner functions, no DDL, no roles', async () => {
        const name = svc.database.url ? new URL(svc.database.url).pathname.slice(1) : '';
        const [me] = await queryRows(
          db(),
          sql`SELECT current_user AS user, rolsuper AS superuser, rolcreaterole AS createrole
                FROM pg_roles WHERE rolname = current_user`,
        );
        assert.deepEqual(me, { user: `${name}_service`, superuser: false, createrole: false });
        const refused = async (statement: string) => {
          await assert.rejects(db().execute(sql.raw(statement)), (err: { cause?: { code?: string } }) => {
            assert.equal(err.cause?.code, '42501', statement);
            return true;
          });
        };
        await refused('DROP TABLE users');
        await refused('ALTER TABLE users ADD COLUMN x int');
        await refused('TRUNCATE audit_logs');
        await refused("UPDATE audit_logs SET actor_email = 'x'");
        await refused("INSERT INTO schema_migrations (name, checksum) VALUES ('x', 'x')");
        await refused('CREATE ROLE someone');
        await refused(`ALTER ROLE ${name}_service SUPERUSER`);
        await refused("SELECT request_role_create('someone')");
        await refused("SELECT observability_events_drop_partition('users')");
        // Partition maintenance and retention, through the owner's functions.
        const [made] = await queryRows(
          db(),
          sql`SELECT created FROM observability_events_maintain('2000-01-01'::date, 0, 0)`,
        );
        assert.equal(made?.created, 1);
        // As retention does it: the day locked against writes, then detached and dropped, in one transaction.
        await db().transaction(async (tx) => {
          await tx.execute(sql`LOCK TABLE observability_events_p20000101 IN SHARE MODE`);
          await tx.execute(sql`SELECT observability_events_drop_partition('observability_events_p20000101')`);
        });
        const [left] = await queryRows(
          db(),
          sql`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'observability_events_p20000101'`,
        );
        assert.equal(left?.n, 0);
      });

      test("Migrate (as the owner) lets <database>_service log in with its secret's password", async () => {
        const url = svc.database.url;
        assert.ok(url);
        const role = `${new URL(url).pathname.slice(1)}_service`;
        const password = randomSecret();
        const owner = await connectDatabase({ db: { ...svc.runtime.config.db, dsn: url } });
        try {
          const asked: string[] = [];
          const read = async (arn: string) => {
            asked.push(arn);
            return JSON.stringify({ username: role, password, engine: 'postgres' });
          };
          assert.equal(await allowServiceRole(owner, 'arn:service-secret', read), role);
          assert.deepEqual(asked, ['arn:service-secret']);
          const wrong = async () => JSON.stringify({ username: 'someone_else', password });
          await assert.rejects(allowServiceRole(owner, 'arn:x', wrong), /must hold the user/);
        } finally {
          await owner.close();
        }
        const login = new URL(url);
        login.username = role;
        login.password = password;
        const c = new pg.Client({ connectionString: login.toString() });
        await c.connect();
        try {
          assert.equal((await c.query('SELECT current_user AS u')).rows[0]?.u, role);
        } finally {
          await c.end();
        }
      });

      test("another database's live roles are left alone; those of a dropped database are swept", async () => {
        const server = testDatabaseUrl();
        assert.ok(server);
        const other = await startTestService('postgres');
        let dropped = false;
        try {
          await seedDemoDatasource(other.runtime.database.db);
          const otherAdmin = await other.adminToken();
          const created = await other.call('POST', '/v1/requests', {
            token: otherAdmin,
            body: demoOrdersRequest(),
          });
          const otherId = (created.body.data as RequestData).id;
          await other.runtime.database.db.execute(
            sql`UPDATE requests SET status = 'approved' WHERE id = ${otherId}::uuid`,
          );
          const row = await findRequest(other.runtime.database.db, otherId);
          assert.ok(row);
          await createBuiltinProvider(other.runtime.database).provision(row);
          const { role } = environmentNames(otherId);
          const roleExists = async () => {
            const c = new pg.Client({ connectionString: server });
            await c.connect();
            try {
              return (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount === 1;
            } finally {
              await c.end();
            }
          };
          await sweepHere();
          assert.equal(await roleExists(), true, "this database's sweep left the other's live role");
          // The other database goes while its request is live: DROP DATABASE cannot drop the role.
          await other.stop();
          await other.database.cleanup();
          dropped = true;
          assert.equal(await roleExists(), true, 'the dropped database left its role');
          await sweepHere();
          assert.equal(await roleExists(), false, 'the sweep dropped the orphan');
        } finally {
          if (!dropped) await other.dispose();
        }
      });
    }
  });
}
