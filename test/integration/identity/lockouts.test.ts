// Sign-in throttling (shared/identity/lockouts.ts) through HTTP, on every driver: failed sign-ins lock the
// account from the address they came from, and the address itself; a lock answers 429 with Retry-After before the
// password is checked, it grows, ends, is audited, and an admin sees and clears it; the account from another address
// is never refused; the CLI token exchange is throttled per address as well.
// Every test signs in from an address of its own (127.0.0.x: the whole 127/8 is loopback), so that the per-address
// counts of one test do not reach another's.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { components } from '#client/openapi.d.ts';
import { verifyAuditChain } from '#shared/audit/audit.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { loginKeys, recordSigninFailure, signinPolicy } from '#shared/identity/lockouts.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { startTestService, TEST_ADMIN, TEST_JWT_SECRET, type TestService } from '#test/support/service.ts';

const DASHBOARD = 'http://dashboard.test';
const PASSWORD = 'a long enough password';
const MAX_ACCOUNT = 3;
const MAX_SOURCE = 6;
const MAX_AUTHORIZE = 4;
// A lock's first length: long enough to stay held on a busy machine through the checks that need it held; a test
// that needs it over ends it in the database (lapse) rather than waiting.
const LOCKOUT_S = 20;

/** A Retry-After (seconds, rounded up) of a lock of `s` seconds taken in the last few seconds. */
function assertRetryAfter(value: unknown, s: number): void {
  const n = Number(value);
  assert.ok(Number.isInteger(n) && n <= s && n > s - 5, `Retry-After ${String(value)}, expected about ${s}`);
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/** An HTTP call to the service from the local address `from` (what the service sees as the source address). */
function callFrom(
  svc: TestService,
  from: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<Answer> {
  const url = new URL(path, svc.url);
  const data = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method,
        localAddress: from,
        headers: {
          ...(data ? { 'content-type': 'application/json' } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode as number,
            body: text ? JSON.parse(text) : {},
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

type LockoutView = components['schemas']['SigninLockout'];

for (const driver of driversUnderTest()) {
  describe(`sign-in lockouts on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let nextAddress = 10;
    /** A source address no other test uses. */
    const address = () => `127.0.0.${nextAddress++}`;
    const login = (from: string, email: string, password: string) =>
      callFrom(svc, from, 'POST', '/v1/auth/login', { body: { email, password } });
    const createUser = async (email: string, roles = ['user']) => {
      const res = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, name: 'Test', password: PASSWORD, roles },
      });
      assert.equal(res.status, 201, res.text);
    };
    const lockouts = async (query = '') => {
      const res = await svc.call('GET', `/v1/admin/signin-lockouts${query}`, { token: admin });
      assert.equal(res.status, 200, res.text);
      return (res.body.data as { lockouts: LockoutView[]; total: number }).lockouts;
    };
    const lockoutOf = async (scope: string, key: string) =>
      (await lockouts(`?scope=${scope}&limit=100`)).find((l) => l.key === key);
    /** The record of an account from an address. */
    const pairOf = (from: string, email: string) =>
      lockoutOf('account_source', `${from} ${email.toLowerCase()}`);
    /** Ends a lock now, as if its time had passed: its end moves to the present (the next request sees it over). */
    const lapse = (scope: string, key: string) =>
      svc.runtime.database.db.execute(
        sql`UPDATE signin_lockouts SET locked_until = now() WHERE scope = ${scope} AND key = ${key}`,
      );
    /** Fails `n` sign-ins, each answered 401. */
    const fail = async (from: string, email: string, n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await login(from, email, 'not the password');
        assert.deepEqual([res.status, res.body.error], [401, 'invalid_credentials'], `failure ${i + 1}`);
      }
    };

    before(async () => {
      svc = await startTestService(driver, {
        dashboard_url: DASHBOARD,
        auth: {
          jwt_secret: TEST_JWT_SECRET,
          signin_max_failures: MAX_ACCOUNT,
          signin_max_failures_per_source: MAX_SOURCE,
          signin_lockout: `${LOCKOUT_S}s`,
          signin_failure_window: '1m',
          cli_authorize_max_per_source: MAX_AUTHORIZE,
        },
      });
      admin = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    test('an account is locked from the address that failed (429, Retry-After, the right password refused); the right password from another address still signs in', async () => {
      const email = 'lock-me@example.test';
      await createUser(email);
      const from = address();
      await fail(from, email, MAX_ACCOUNT);
      // Locked for this address: refused before the password is checked, so the right one is refused too.
      const locked = await login(from, email, PASSWORD);
      assert.deepEqual([locked.status, locked.body.error], [429, 'too_many_attempts']);
      assert.deepEqual(Object.keys(locked.body).sort(), ['error', 'message']);
      assertRetryAfter(locked.headers['retry-after'], LOCKOUT_S);
      assert.match(String(locked.body.message), new RegExp(`paused for ${locked.headers['retry-after']} s`));
      assert.match(String(locked.body.message), /other addresses are not affected/);
      // From an address that has not failed, the right password signs in at once: a guesser elsewhere cannot lock
      // the owner out. A wrong one there is counted there.
      const elsewhere = address();
      assert.equal((await login(elsewhere, email.toUpperCase(), PASSWORD)).status, 200);
      const row = await pairOf(from, email);
      assert.ok(row?.locked, JSON.stringify(row));
      assert.deepEqual([row.account, row.source], [email, from]);
      await lapse('account_source', `${from} ${email}`);
      const ok = await login(from, email, PASSWORD);
      assert.equal(ok.status, 200);
      // The success cleared the account's failures from this address; the address's own stay counted.
      assert.equal(await pairOf(from, email), undefined);
      assert.equal((await lockoutOf('source', from))?.failures, MAX_ACCOUNT);
    });

    test("five wrong passwords for the first admin from one address do not stop the admin's right password from another; that address is throttled", async () => {
      const attacker = address();
      for (let i = 0; i < 5; i++) {
        const res = await login(attacker, TEST_ADMIN.email.toUpperCase(), `guess ${i}`);
        assert.ok([401, 429].includes(res.status), `attempt ${i + 1}: ${res.status}`);
      }
      assert.deepEqual(
        [(await login(attacker, TEST_ADMIN.email, TEST_ADMIN.password)).status],
        [429],
        'the address that guessed is throttled, even with the right password',
      );
      const admin = await login(address(), TEST_ADMIN.email, TEST_ADMIN.password);
      assert.equal(admin.status, 200, JSON.stringify(admin.body));
    });

    test('each further failure doubles the lock, at most the failure window', async () => {
      const email = 'doubling@example.test';
      const from = address();
      await fail(from, email, MAX_ACCOUNT);
      const first = await pairOf(from, email);
      assert.ok(first?.locked && first.locked_at && first.locked_until);
      assert.equal(Date.parse(first.locked_until) - Date.parse(first.locked_at), LOCKOUT_S * 1000);
      await lapse('account_source', `${from} ${email}`);
      await fail(from, email, 1);
      const second = await login(from, email, 'x');
      assert.equal(second.status, 429);
      assertRetryAfter(second.headers['retry-after'], 2 * LOCKOUT_S);
      const row = await pairOf(from, email);
      assert.equal(row?.failures, MAX_ACCOUNT + 1);
      assert.equal(
        Date.parse(row?.locked_until ?? '') - Date.parse(row?.locked_at ?? ''),
        2 * LOCKOUT_S * 1000,
      );
      // Far past the threshold the lock is the window (1 minute), however many failures there were.
      await svc.runtime.database.db.execute(
        sql`UPDATE signin_lockouts SET failures = 40, locked_until = now()
            WHERE scope = 'account_source' AND key = ${`${from} ${email}`}`,
      );
      await fail(from, email, 1);
      const capped = await login(from, email, 'x');
      assert.equal(capped.status, 429);
      assert.ok(Number(capped.headers['retry-after']) > 55, String(capped.headers['retry-after']));
      assert.ok(Number(capped.headers['retry-after']) <= 60, String(capped.headers['retry-after']));
    });

    test('an unknown email is counted and locked like a known one: the answers do not tell them apart', async () => {
      const known = 'known@example.test';
      await createUser(known);
      const answers: Answer[][] = [];
      for (const email of [known, 'nobody@example.test']) {
        const from = address();
        const seen: Answer[] = [];
        for (let i = 0; i <= MAX_ACCOUNT; i++) seen.push(await login(from, email, 'wrong password'));
        answers.push(seen);
      }
      const shape = (a: Answer) => [
        a.status,
        a.body,
        a.headers['retry-after'],
        a.headers['www-authenticate'],
      ];
      assert.deepEqual(answers[0]?.map(shape), answers[1]?.map(shape));
      assert.deepEqual(
        answers[0]?.map((a) => a.status),
        [...Array(MAX_ACCOUNT).fill(401), 429],
      );
    });

    test('a source address is locked after its failures across emails; other addresses are not', async () => {
      const email = 'office@example.test';
      await createUser(email);
      const from = address();
      for (let i = 0; i < MAX_SOURCE; i++) await fail(from, `spray-${i}@example.test`, 1);
      const locked = await login(from, email, PASSWORD);
      assert.deepEqual([locked.status, locked.body.error], [429, 'too_many_attempts']);
      assertRetryAfter(locked.headers['retry-after'], LOCKOUT_S);
      assert.match(String(locked.body.message), /network address/);
      assert.equal((await login(address(), email, PASSWORD)).status, 200);
      const row = await lockoutOf('source', from);
      assert.equal(row?.failures, MAX_SOURCE);
      assert.ok(row?.locked_at);
      await lapse('source', from);
      assert.equal((await login(from, email, PASSWORD)).status, 200);
      // A success does not clear the address's failures: the next failure locks it again, for twice as long.
      assert.equal((await lockoutOf('source', from))?.failures, MAX_SOURCE);
      await fail(from, 'spray-x@example.test', 1);
      const again = await login(from, email, PASSWORD);
      assert.equal(again.status, 429);
      assertRetryAfter(again.headers['retry-after'], 2 * LOCKOUT_S);
    });

    test('a lock writes an audit record (who, address, failures, until when); the chain stays intact', async () => {
      // A key with every character JSON escapes: the record's hash is computed by the database (audit.ts).
      const email = 'We"ird\\\tÜnï😀@Example.test';
      const key = email.toLowerCase();
      const from = address();
      await fail(from, email, MAX_ACCOUNT);
      const row = await pairOf(from, key);
      assert.ok(row?.locked_at);
      const res = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=signin.locked&resource_id=${row.id}`,
        { token: admin },
      );
      const logs = (res.body.data as { logs: Array<Record<string, unknown>> }).logs;
      assert.equal(logs.length, 1);
      const [record] = logs as [Record<string, unknown>];
      assert.equal(record.actor_email, key);
      assert.equal(record.ip_address, from);
      assert.equal(record.resource_type, 'signin_lockout');
      assert.equal(record.level, 'warn');
      assert.deepEqual(record.metadata, {
        scope: 'account_source',
        key: `${from} ${key}`,
        failures: MAX_ACCOUNT,
        locked_until: row.locked_until,
        lockout_s: LOCKOUT_S,
        source_ip: from,
      });
      const verify = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal((verify.body.data as { intact: boolean }).intact, true);
      assert.equal((await verifyAuditChain(svc.runtime.database.db)).intact, true);
    });

    test('admins list and clear lockouts (audited); others are refused', async () => {
      const email = 'cleared@example.test';
      await createUser(email);
      const from = address();
      await fail(from, email, MAX_ACCOUNT);
      // A lock that lasts through this test's other calls.
      await svc.runtime.database.db.execute(
        sql`UPDATE signin_lockouts SET locked_until = now() + interval '1 minute'
            WHERE scope = 'account_source' AND key = ${`${from} ${email}`}`,
      );
      const locked = await lockouts('?status=locked&scope=account_source');
      const row = locked.find((l) => l.key === `${from} ${email}`);
      assert.ok(row?.locked && Number(row.retry_after_s) > 50, JSON.stringify(row));
      assert.ok(locked.every((l) => l.locked && l.scope === 'account_source'));
      assert.ok((await lockouts('?status=failing')).every((l) => !l.locked));
      const page = await svc.call('GET', '/v1/admin/signin-lockouts?limit=1', { token: admin });
      const data = page.body.data as { lockouts: unknown[]; total: number; limit: number };
      assert.equal(data.lockouts.length, 1);
      assert.ok(data.total >= 2);
      const tooMany = await svc.call('GET', '/v1/admin/signin-lockouts?limit=500', { token: admin });
      assert.deepEqual([tooMany.status, tooMany.body.error], [400, 'validation_failed']);

      await createUser('plain-user@example.test');
      const user = (
        (await login(address(), 'plain-user@example.test', PASSWORD)).body.data as { access_token: string }
      ).access_token;
      assert.equal((await svc.call('GET', '/v1/admin/signin-lockouts', { token: user })).status, 403);
      assert.equal(
        (await svc.call('DELETE', `/v1/admin/signin-lockouts/${row.id}`, { token: user })).status,
        403,
      );
      assert.equal((await svc.call('DELETE', `/v1/admin/signin-lockouts/${row.id}`)).status, 401);

      const cleared = await svc.call('DELETE', `/v1/admin/signin-lockouts/${row.id}`, { token: admin });
      assert.equal(cleared.status, 200);
      assert.deepEqual(
        { ...(cleared.body.data as LockoutView), retry_after_s: 0 },
        { ...row, retry_after_s: 0 },
      );
      // The lock is gone at once, and the count starts again.
      assert.equal((await login(from, email, PASSWORD)).status, 200);
      const again = await svc.call('DELETE', `/v1/admin/signin-lockouts/${row.id}`, { token: admin });
      assert.deepEqual([again.status, again.body.error], [404, 'not_found']);
      const audit = await svc.call(
        'GET',
        `/v1/admin/audit-logs?action_type=signin.lockout_cleared&resource_id=${row.id}`,
        { token: admin },
      );
      const [record] = (
        audit.body.data as { logs: Array<{ actor_email: string; metadata: Record<string, unknown> }> }
      ).logs;
      assert.equal(record?.actor_email, TEST_ADMIN.email);
      assert.deepEqual([record?.metadata.key, record?.metadata.was_locked], [`${from} ${email}`, true]);
    });

    test('a success below the threshold clears the account: its count starts again', async () => {
      const email = 'forgetful@example.test';
      await createUser(email);
      const from = address();
      await fail(from, email, MAX_ACCOUNT - 1);
      assert.equal((await pairOf(from, email))?.failures, MAX_ACCOUNT - 1);
      assert.equal((await login(from, email, PASSWORD)).status, 200);
      assert.equal(await pairOf(from, email), undefined);
      await fail(from, email, MAX_ACCOUNT - 1);
      assert.equal((await login(from, email, PASSWORD)).status, 200);
    });

    test('the CLI token exchange: failed exchanges lock the address (429, Retry-After); a good code waits it out', async () => {
      const from = address();
      const verifier = `${randomUUID()}${randomUUID()}`;
      const redirect = 'http://127.0.0.1:5010/callback';
      const exchange = (code: string) =>
        callFrom(svc, from, 'POST', '/v1/auth/cli/token', {
          body: { code, code_verifier: verifier, redirect_uri: redirect },
        });
      for (let i = 0; i < MAX_SOURCE; i++) {
        const res = await exchange(`guess-${i}`);
        assert.deepEqual([res.status, res.body.error], [400, 'invalid_grant']);
      }
      const start = await fetch(
        `${svc.url}/v1/auth/cli/authorize?${new URLSearchParams({
          redirect_uri: redirect,
          state: 'st',
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          client_id: 'acp-agent-cli',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual' },
      );
      const request = new URL(start.headers.get('location') as string).searchParams.get('request');
      const approved = await svc.call('POST', '/v1/auth/cli/approve', { token: admin, body: { request } });
      const code = new URL((approved.body.data as { redirect_to: string }).redirect_to).searchParams.get(
        'code',
      ) as string;
      const locked = await exchange(code);
      assert.deepEqual([locked.status, locked.body.error], [429, 'too_many_attempts']);
      assertRetryAfter(locked.headers['retry-after'], LOCKOUT_S);
      assert.equal((await lockoutOf('cli_source', from))?.failures, MAX_SOURCE);
      // Its own scope: the address can still sign in with a password.
      assert.equal((await login(from, TEST_ADMIN.email, TEST_ADMIN.password)).status, 200);
      // The refused exchange did not look at the code, so it still works once the lock is over.
      await lapse('cli_source', from);
      const exchanged = await exchange(code);
      assert.equal(exchanged.status, 200);
      assert.equal(exchanged.body.token_type, 'Bearer');
    });

    test('CLI sign-ins started per address are bounded: past auth.cli_authorize_max_per_source, 429 with Retry-After and nothing stored; other addresses go on', async () => {
      const from = address();
      const authorize = (origin: string) =>
        callFrom(
          svc,
          origin,
          'GET',
          `/v1/auth/cli/authorize?${new URLSearchParams({
            redirect_uri: 'http://127.0.0.1:5011/callback',
            state: 'st',
            code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
            client_id: 'acp-agent-cli',
            code_challenge_method: 'S256',
          })}`,
        );
      const stored = async (origin: string) =>
        Number(
          (
            await queryRows(
              svc.runtime.database.db,
              sql`SELECT count(*)::int AS n FROM cli_signins WHERE source_ip = ${origin}`,
            )
          )[0]?.n,
        );
      for (let i = 0; i < MAX_AUTHORIZE; i++) {
        const res = await authorize(from);
        assert.equal(res.status, 302, `sign-in ${i + 1}`);
      }
      const refused = await authorize(from);
      assert.deepEqual([refused.status, refused.body.error], [429, 'too_many_requests']);
      assert.equal(refused.headers.location, undefined);
      // Until the oldest open one ends (each lives 10 minutes).
      const retry = Number(refused.headers['retry-after']);
      assert.ok(retry > 590 && retry <= 600, String(retry));
      assert.equal(await stored(from), MAX_AUTHORIZE);
      assert.equal((await authorize(address())).status, 302);
      // Once the oldest has ended, the address may start one again.
      await svc.runtime.database.db.execute(
        sql`UPDATE cli_signins SET expires_at = now() - interval '1 second'
            WHERE id = (SELECT id FROM cli_signins WHERE source_ip = ${from} ORDER BY created_at LIMIT 1)`,
      );
      assert.equal((await authorize(from)).status, 302);
    });

    test('concurrent failures each count once, and the lock is audited once', async () => {
      // Through HTTP: some attempts pass the check before the lock, the rest are refused; the count is theirs.
      const email = 'parallel@example.test';
      const from = address();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => login(from, email, 'wrong password')),
      );
      const refusedAs = answers.map((a) => a.status);
      assert.ok(
        refusedAs.every((s) => s === 401 || s === 429),
        refusedAs.join(),
      );
      const failed = refusedAs.filter((s) => s === 401).length;
      assert.equal((await pairOf(from, email))?.failures, failed);
      assert.equal((await lockoutOf('source', from))?.failures, failed);

      // Straight to the domain function, with the database's own concurrency: every failure counts.
      const keys = loginKeys('racing@example.test', address());
      const policy = signinPolicy(svc.runtime.config);
      const db = svc.runtime.database.db;
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () => recordSigninFailure(db, policy, keys, '127.0.0.200')),
      );
      const account = outcomes.map((o) => o.find((r) => r.scope === 'account_source'));
      assert.deepEqual(
        account.map((r) => r?.failures).sort((a, b) => Number(a) - Number(b)),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.equal(account.filter((r) => r?.lock_started).length, 1);
      assert.equal(account.find((r) => r?.lock_started)?.failures, MAX_ACCOUNT);
      const [audits] = await queryRows(
        db,
        sql`SELECT count(*)::int AS n FROM audit_logs WHERE action_type = 'signin.locked'
              AND actor_email = 'racing@example.test'`,
      );
      assert.equal(Number(audits?.n), 1);
      assert.equal((await verifyAuditChain(db)).intact, true);
    });

    test('the probe deletes records past their window that are not locked, and nothing else', async () => {
      const db = svc.runtime.database.db;
      const from = address();
      await fail(from, 'stale@example.test', 1);
      await fail(from, 'stale-but-locked@example.test', 1);
      await fail(from, 'fresh@example.test', 1);
      const key = (email: string) => `${from} ${email}`;
      await db.execute(
        sql`UPDATE signin_lockouts SET expires_at = now() - interval '1 second'
            WHERE scope = 'account_source' AND key IN (${key('stale@example.test')}, ${key('stale-but-locked@example.test')})`,
      );
      await db.execute(
        sql`UPDATE signin_lockouts SET locked_until = now() + interval '1 minute'
            WHERE scope = 'account_source' AND key = ${key('stale-but-locked@example.test')}`,
      );
      await svc.runSchedule('healthProbe');
      const left = await queryRows(
        db,
        sql`SELECT key FROM signin_lockouts WHERE scope = 'account_source'
              AND key IN (${key('stale@example.test')}, ${key('stale-but-locked@example.test')}, ${key('fresh@example.test')})
            ORDER BY key`,
      );
      assert.deepEqual(
        left.map((r) => r.key),
        [key('fresh@example.test'), key('stale-but-locked@example.test')],
      );
    });

    if (driver === 'data-api') {
      test('Data API calls per sign-in: one read, one more for a failure, none more while locked', async () => {
        const server = svc.database.dataApi!;
        const email = 'counted@example.test';
        await createUser(email);
        const from = address();
        const calls = async (run: () => Promise<unknown>) => {
          server.resetCalls();
          await run();
          return { ...server.calls };
        };
        assert.deepEqual(await calls(() => login(from, email, PASSWORD)), { Execute: 1 });
        assert.deepEqual(await calls(() => login(from, email, 'wrong')), { Execute: 2 });
        // With failures on record, a success also deletes them.
        assert.deepEqual(await calls(() => login(from, email, PASSWORD)), { Execute: 2 });
        await fail(from, email, MAX_ACCOUNT);
        assert.deepEqual(await calls(() => login(from, email, PASSWORD)), { Execute: 1 });
      });
    }

    test('the OpenAPI document lists 429 with Retry-After for both sign-in routes', async () => {
      const doc = (await svc.call('GET', '/v1/openapi.json')).body as {
        paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
      };
      for (const path of ['/v1/auth/login', '/v1/auth/cli/token']) {
        assert.ok(doc.paths[path]?.post?.responses['429']?.headers, path);
      }
    });
  });
}
