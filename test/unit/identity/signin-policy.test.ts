// The arithmetic and the keys of sign-in throttling (shared/identity/lockouts.ts); the statements that apply
// them are tested through HTTP in test/integration/identity/lockouts.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ServiceError } from '#shared/core/errors.ts';
import {
  accountKey,
  cliExchangeKeys,
  type KeyState,
  keyParts,
  lockDurationMs,
  loginKeys,
  refuseWhileLocked,
  type SigninPolicy,
  signinPolicy,
  sourceKey,
} from '#shared/identity/lockouts.ts';
import { testConfig } from '#test/support/service.ts';

const policy: SigninPolicy = {
  maxFailures: { account_source: 5, source: 20, cli_source: 20 },
  lockoutMs: 30_000,
  windowMs: 15 * 60_000,
};

test('the defaults: 5 failures per account and address, 20 per address, 30 s doubling, at most 15 minutes', () => {
  assert.deepEqual(signinPolicy(testConfig()), policy);
});

test('no lock below the threshold; the base lock at it, doubling after it, capped at the window', () => {
  assert.deepEqual(
    [1, 4, 5, 6, 7, 8, 9, 10, 11, 1000].map((n) => lockDurationMs(n, 5, policy) / 1000),
    [0, 0, 30, 60, 120, 240, 480, 900, 900, 900],
  );
  assert.equal(lockDurationMs(20, 20, policy), 30_000);
  assert.equal(lockDurationMs(Number.MAX_SAFE_INTEGER, 1, policy), policy.windowMs);
});

test('property: a lock never shrinks with more failures, and stays within the window', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1000 }),
      fc.integer({ min: 1, max: 100 }),
      fc.integer({ min: 1, max: 3_600_000 }),
      fc.integer({ min: 0, max: 10 }),
      (failures, max, lockout, extra) => {
        const p = { ...policy, lockoutMs: lockout, windowMs: lockout * 2 ** extra };
        const now = lockDurationMs(failures, max, p);
        const next = lockDurationMs(failures + 1, max, p);
        return next >= now && next <= p.windowMs && failures < max === (now === 0);
      },
    ),
  );
});

test('an account is the email as given, trimmed and lower-cased, known or not; counted with its source address', () => {
  assert.equal(accountKey('  Ana@Example.COM '), 'ana@example.com');
  assert.deepEqual(loginKeys('Ana@Example.com', '192.0.2.7'), [
    { scope: 'account_source', key: '192.0.2.7 ana@example.com' },
    { scope: 'source', key: '192.0.2.7' },
  ]);
  // No key of the account alone: nothing one address does locks the account at another.
  assert.notDeepEqual(
    loginKeys('ana@example.com', '192.0.2.7')[0],
    loginKeys('ana@example.com', '192.0.2.8')[0],
  );
  // The key splits back into its parts, whatever the email holds.
  fc.assert(
    fc.property(fc.string(), fc.constantFrom('198.51.100.23', '2001:db8:1:2::9', ''), (email, address) => {
      const [pair] = loginKeys(email, address);
      return (
        JSON.stringify(keyParts('account_source', pair?.key ?? '')) ===
        JSON.stringify({ account: accountKey(email), source: sourceKey(address) ?? null })
      );
    }),
  );
  assert.deepEqual(keyParts('source', '192.0.2.7'), { account: null, source: '192.0.2.7' });
});

test('a source is an IPv4 address, or the /64 of an IPv6 address; an unknown one is no key', () => {
  const cases: Array<[string, string | undefined]> = [
    ['198.51.100.23', '198.51.100.23'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['2001:DB8:a:b::', '2001:db8:a:b::/64'],
    ['::1', '::/64'],
    ['2001:0:0:1::7', '2001:0:0:1::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['64:ff9b::203.0.113.9', '64:ff9b::/64'],
    ['', undefined],
  ];
  for (const [address, key] of cases) assert.equal(sourceKey(address), key, address);
  assert.deepEqual(loginKeys('a@b', ''), [{ scope: 'account_source', key: '- a@b' }]);
  assert.deepEqual(cliExchangeKeys('2001:db8:1:2::9'), [{ scope: 'cli_source', key: '2001:db8:1:2::/64' }]);
});

test('a locked key is 429 too_many_attempts with Retry-After, the longest lock when several are', () => {
  const state = (scope: KeyState['scope'], locked: boolean, retry: number | null): KeyState => ({
    scope,
    failures: 9,
    locked,
    retry_after_s: retry,
  });
  assert.doesNotThrow(() =>
    refuseWhileLocked([state('account_source', false, null), state('source', false, null)]),
  );
  assert.throws(
    () => refuseWhileLocked([state('account_source', true, 12), state('source', true, 240)]),
    (err: unknown) =>
      err instanceof ServiceError &&
      err.kind === 'rate_limited' &&
      err.code === 'too_many_attempts' &&
      err.retryAfterSeconds === 240 &&
      /network address/.test(err.message),
  );
  assert.throws(
    () => refuseWhileLocked([state('account_source', true, 30)]),
    (err: unknown) =>
      err instanceof ServiceError &&
      err.retryAfterSeconds === 30 &&
      /this email from your network address/.test(err.message),
  );
});
