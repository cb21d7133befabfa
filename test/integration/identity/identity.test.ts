// Who may call, from the database (shared/core/auth/caller.ts), on every driver: a token signed with the service's own
// secret for a user who does not exist mints nothing; a user deleted, disabled or demoted loses access at once, and a
// promoted one gains it at once; the identity provider's people get a row at their first token, with the roles of
// the documented mapping, and from then on the row's roles hold, whatever later tokens claim.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { installOfflineIdp } from '#test/support/offline-idp.ts';
import { startTestService, TEST_JWT_SECRET, type TestService } from '#test/support/service.ts';

const PASSWORD = 'a long enough password';

for (const driver of driversUnderTest()) {
  describe(`identity from the database on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    const db = () => svc.runtime.database.db;

    /** A user made by the admin, signed in: its token and id. */
    const signedIn = async (email: string, roles: string[]) => {
      const created = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, name: 'Test', password: PASSWORD, roles },
      });
      assert.equal(created.status, 201, created.text);
      const login = await svc.call('POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
      assert.equal(login.status, 200, login.text);
      const data = login.body.data as { access_token: string; user: { id: string } };
      return { token: data.access_token, id: data.user.id };
    };
    const userCount = async () =>
      Number((await queryRows(db(), sql`SELECT count(*)::int AS n FROM users`))[0]?.n);

    before(async () => {
      svc = await startTestService(driver);
      admin = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    test("a token signed with the service's secret for a user who does not exist is refused: no admin is minted", async () => {
      const now = Math.floor(Date.now() / 1000);
      const ghost = await new SignJWT({ roles: ['admin'], email: 'ghost@example.test' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('ghost')
        .setIssuer(svc.runtime.config.auth.jwt_issuer)
        .setAudience(svc.runtime.config.auth.jwt_audience)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      // A subject shaped like a user id, of no user, too.
      const stranger = (
        await issueLocalToken(svc.runtime.config, {
          subject: '00000000-0000-4000-8000-000000000001',
          email: 'stranger@example.test',
          name: 'S',
          roles: ['admin'],
        })
      ).access_token;
      const before = await userCount();
      for (const token of [ghost, stranger]) {
        const list = await svc.call('GET', '/v1/admin/users', { token });
        assert.deepEqual([list.status, list.body.error], [401, 'invalid_token']);
        const create = await svc.call('POST', '/v1/admin/users', {
          token,
          body: { email: `minted-${Math.random()}@example.test`, password: PASSWORD, roles: ['admin'] },
        });
        assert.deepEqual([create.status, create.body.error], [401, 'invalid_token']);
        assert.equal((await svc.call('GET', '/v1/me', { token })).status, 401);
      }
      assert.equal(await userCount(), before);
    });

    test('the roles are the database’s: a demoted admin is refused at once, a promoted user admitted at once', async () => {
      const bob = await signedIn('bob-admin@example.test', ['admin', 'user']);
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: bob.token })).status, 200);
      await db().execute(sql`UPDATE users SET roles = '["user"]'::jsonb WHERE id = ${bob.id}::uuid`);
      const me = await svc.call('GET', '/v1/me', { token: bob.token });
      assert.equal(me.status, 200);
      assert.deepEqual((me.body.data as { roles: string[] }).roles, ['user']);
      const create = await svc.call('POST', '/v1/admin/users', {
        token: bob.token,
        body: { email: 'by-a-demoted-admin@example.test', password: PASSWORD, roles: ['admin'] },
      });
      assert.deepEqual([create.status, create.body.error], [403, 'forbidden']);
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: bob.token })).status, 403);

      const carol = await signedIn('carol@example.test', ['user']);
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: carol.token })).status, 403);
      await db().execute(
        sql`UPDATE users SET roles = '["admin","user"]'::jsonb WHERE id = ${carol.id}::uuid`,
      );
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: carol.token })).status, 200);
    });

    test('a deleted user’s token is refused at once (401 invalid_token), the CLI sign-in token too', async () => {
      const dave = await signedIn('dave@example.test', ['user']);
      const cli = (
        await issueLocalToken(svc.runtime.config, {
          subject: dave.id,
          email: 'dave@example.test',
          name: '',
          roles: ['user'],
          tokenUse: 'cli',
        })
      ).access_token;
      assert.equal((await svc.call('GET', '/v1/me', { token: dave.token })).status, 200);
      await db().execute(sql`DELETE FROM users WHERE id = ${dave.id}::uuid`);
      const me = await svc.call('GET', '/v1/me', { token: dave.token });
      assert.deepEqual([me.status, me.body.error], [401, 'invalid_token']);
      // The enrollment token of a deleted user enrolls nothing (the bearer is checked before the device signature).
      const register = await svc.call('POST', '/v1/devices/register', { token: cli, body: {} });
      assert.equal(register.status, 401);
    });

    test('a disabled user’s token is refused at once (401 account_disabled), and so is their sign-in; enabled, both work again', async () => {
      const erin = await signedIn('erin@example.test', ['user']);
      await db().execute(sql`UPDATE users SET disabled_at = now() WHERE id = ${erin.id}::uuid`);
      const me = await svc.call('GET', '/v1/me', { token: erin.token });
      assert.deepEqual([me.status, me.body.error], [401, 'account_disabled']);
      const login = await svc.call('POST', '/v1/auth/login', {
        body: { email: 'erin@example.test', password: PASSWORD },
      });
      assert.deepEqual([login.status, login.body.error], [401, 'account_disabled']);
      // Only the right password learns that the account is disabled.
      const wrong = await svc.call('POST', '/v1/auth/login', {
        body: { email: 'erin@example.test', password: 'not the password' },
      });
      assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_credentials']);
      await db().execute(sql`UPDATE users SET disabled_at = NULL WHERE id = ${erin.id}::uuid`);
      assert.equal((await svc.call('GET', '/v1/me', { token: erin.token })).status, 200);
    });

    test('an admin read checks its caller in its own statement: the row refuses a gone, disabled or demoted admin before any answer of the route', async () => {
      const reads = [
        ['/v1/admin/users', 200],
        ['/v1/admin/observability/summary', 200],
        // The route's own answers for the token's admin: not found, and a refused parameter.
        ['/v1/admin/requests/00000000-0000-4000-8000-000000000009', 404],
        ['/v1/admin/observability/summary?bucket=fortnight', 400],
      ] as const;
      const answersTo = async (token: string) => {
        const answers = [];
        for (const [path] of reads) {
          const res = await svc.call('GET', path, { token });
          answers.push({ status: res.status, error: res.body.error });
        }
        return answers;
      };
      const cases = [
        ['demoted', sql`UPDATE users SET roles = '["user"]'::jsonb`, 403, 'forbidden'],
        ['disabled', sql`UPDATE users SET disabled_at = now()`, 401, 'account_disabled'],
        ['deleted', sql`DELETE FROM users`, 401, 'invalid_token'],
      ] as const;
      for (const [who, change, status, error] of cases) {
        const frank = await signedIn(`frank-${who}@example.test`, ['admin', 'user']);
        for (const [i, got] of (await answersTo(frank.token)).entries()) {
          assert.equal(got.status, reads[i]?.[1], `${reads[i]?.[0]} before: ${JSON.stringify(got)}`);
        }
        await db().execute(sql`${change} WHERE id = ${frank.id}::uuid`);
        for (const [i, got] of (await answersTo(frank.token)).entries()) {
          assert.deepEqual(
            [got.status, got.error],
            [status, error],
            `${reads[i]?.[0]}, ${who}: the row's answer, not the route's`,
          );
        }
      }
    });

    test("the guarded statement runs the route's query only for an enabled admin, and returns its rows in order", async () => {
      const { authenticate } = await import('#shared/core/auth/authenticate.ts');
      const { readGuard } = await import('#shared/core/auth/read-guard.ts');
      const grace = await signedIn('grace@example.test', ['admin', 'user']);
      await db().execute(sql`CREATE SEQUENCE IF NOT EXISTS guard_probe`);
      const probe = async () =>
        (
          await queryRows(db(), sql`SELECT is_called::text AS called, last_value::text AS v FROM guard_probe`)
        )[0];
      const guardFor = async (token: string) => {
        const headers = { authorization: `Bearer ${token}` };
        const request = { config: svc.runtime.config, db: db(), headers, sourceIp: '' };
        const verified = await authenticate(svc.runtime.config, headers);
        return readGuard(request, verified);
      };
      // nextval has an effect a statement that did not run leaves undone.
      const query = sql`SELECT nextval('guard_probe')::int AS n, x FROM generate_series(3, 1, -1) AS x ORDER BY x DESC`;
      const admitted = await guardFor(grace.token);
      assert.deepEqual(await queryRows(admitted.db, query), [
        { n: 1, x: 3 },
        { n: 2, x: 2 },
        { n: 3, x: 1 },
      ]);
      assert.equal((await admitted.settle()).email, 'grace@example.test');
      await db().execute(sql`UPDATE users SET roles = '["user"]'::jsonb WHERE id = ${grace.id}::uuid`);
      const before = await probe();
      const refused = await guardFor(grace.token);
      await assert.rejects(queryRows(refused.db, query), { kind: 'forbidden' });
      await assert.rejects(refused.settle(), { kind: 'forbidden' });
      assert.deepEqual(await probe(), before, 'the query did not run');
    });

    test('POST /v1/admin/users: roles is bounded (300,000 items is 400 naming roles), each role once; nothing stored', async () => {
      const before = await userCount();
      for (const roles of [Array.from({ length: 300_000 }, () => 'admin'), ['user', 'user'], []]) {
        const res = await svc.call('POST', '/v1/admin/users', {
          token: admin,
          body: { email: `roles-${roles.length}@example.test`, password: PASSWORD, roles },
        });
        assert.deepEqual([res.status, res.body.error], [400, 'validation_failed'], res.text.slice(0, 300));
        assert.match(String(res.body.message), /roles/);
      }
      assert.equal(await userCount(), before);
    });

    test('what a token says of its person is not what the service answers: the email and name are the row’s', async () => {
      const fay = await signedIn('fay@example.test', ['user']);
      await db().execute(sql`UPDATE users SET name = 'Fay Renamed' WHERE id = ${fay.id}::uuid`);
      const me = await svc.call('GET', '/v1/me', { token: fay.token });
      assert.equal((me.body.data as { name: string }).name, 'Fay Renamed');
    });
  });

  describe(`identity provider people in the users table on ${driver}`, () => {
    let svc: TestService;
    let sign: (claims: Record<string, unknown>, subject: string) => Promise<string>;

    before(async () => {
      svc = await startTestService(driver, {
        auth: { provider: 'idp', idp_domain: 'idp.identity.test', idp_audience: 'api://acp' },
      });
      const idp = await installOfflineIdp(svc.runtime.config);
      sign = (claims, subject) => idp.sign(claims, subject);
    });
    after(async () => svc?.dispose());

    const rowOf = async (subject: string) =>
      (
        await queryRows(
          svc.runtime.database.db,
          sql`SELECT email, roles::text AS roles, disabled_at IS NOT NULL AS disabled FROM users WHERE idp_subject = ${subject}`,
        )
      )[0];

    test('the first token of a subject makes its row with the mapped roles (audited); later claims do not change them', async () => {
      const first = await sign(
        { email: 'ida@idp.test', name: 'Ida', roles: ['admin', 'superuser'] },
        'idp|ida',
      );
      const me = await svc.call('GET', '/v1/me', { token: first });
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(me.body.data, {
        subject: 'idp|ida',
        email: 'ida@idp.test',
        name: 'Ida',
        roles: ['admin'],
        token_use: 'session',
      });
      assert.deepEqual(JSON.parse(String((await rowOf('idp|ida'))?.roles)), ['admin']);
      const audit = await svc.call('GET', '/v1/admin/audit-logs?action_type=user.provisioned', {
        token: first,
      });
      const [record] = (audit.body.data as { logs: Array<{ metadata: Record<string, unknown> }> }).logs;
      assert.deepEqual(record?.metadata, { idp_subject: 'idp|ida', email: 'ida@idp.test', roles: ['admin'] });

      // Demoted in the table: a token that still claims admin gets no admin route.
      await svc.runtime.database.db.execute(
        sql`UPDATE users SET roles = '["user"]'::jsonb WHERE idp_subject = 'idp|ida'`,
      );
      const later = await sign({ email: 'ida@idp.test', roles: ['admin'] }, 'idp|ida');
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: later })).status, 403);
      // And a user the provider later calls admin stays a user here.
      const plain = await sign({ email: 'ned@idp.test', roles: ['user'] }, 'idp|ned');
      assert.equal((await svc.call('GET', '/v1/me', { token: plain })).status, 200);
      const promotedClaim = await sign({ email: 'ned@idp.test', roles: ['admin'] }, 'idp|ned');
      assert.equal((await svc.call('GET', '/v1/admin/users', { token: promotedClaim })).status, 403);
    });

    test('a disabled IdP person is refused; concurrent first tokens make one row', async () => {
      const tokens = await Promise.all(
        Array.from({ length: 5 }, () => sign({ email: 'olga@idp.test', roles: ['user'] }, 'idp|olga')),
      );
      const answers = await Promise.all(tokens.map((token) => svc.call('GET', '/v1/me', { token })));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200, 200],
      );
      const [count] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT count(*)::int AS n FROM users WHERE idp_subject = 'idp|olga'`,
      );
      assert.equal(Number(count?.n), 1);
      await svc.runtime.database.db.execute(
        sql`UPDATE users SET disabled_at = now() WHERE idp_subject = 'idp|olga'`,
      );
      const me = await svc.call('GET', '/v1/me', { token: tokens[0] });
      assert.deepEqual([me.status, me.body.error], [401, 'account_disabled']);
      assert.equal((await rowOf('idp|olga'))?.disabled, true);
    });
  });
}
