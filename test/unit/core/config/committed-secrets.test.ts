// The committed secrets' digests (shared/core/config/committed-secrets.ts) against the strings themselves: every value
// ever committed to this repository as a JWT secret or a service token (found with `git log -p -S jwt_secret --all`,
// and the same for the tokens). They are public, so each is refused at startup, under each key that holds a secret.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { committedSecretDigests, isCommittedSecret } from '#shared/core/config/committed-secrets.ts';
import { loadConfig } from '#shared/core/config/load.ts';
import { randomSecret } from '#test/support/secrets.ts';

const COMMITTED = [
  // JWT secrets.
  'local-development-secret-change-me-0123456789',
  'test-secret-that-is-at-least-32-bytes-long!!',
  'a-local-secret-that-is-long-enough-0123456789',
  'bundle-test-secret-0123456789abcdef-0123456789',
  'config-stubs-test-secret-0123456789abcdef',
  'synth-time-placeholder; the deployed value comes from Secrets Manager',
  'secret-from-secrets-manager-0123456789abcdef',
  'a-test-secret-of-at-least-32-characters!',
  'a-deployment-secret-of-enough-length',
  'another-deployment-secret-entirely',
  // The log shipper's tokens.
  'local-log-shipper-token-change-me-0123456789',
  'local-log-shipper-token-0123456789abcdef',
  'log-shipper-token-for-tests-0123456789abcdef',
  'bundle-test-audit-ingest-token-0123456789abcdef',
  'a-log-shipper-token-0123456789abcdef',
  'log-shipper-token-from-secrets-manager-0123456789',
  // The environment service's tokens.
  'local-envsvc-token',
  'envsvc-token-for-the-probe-test',
  'envsvc-token',
  'bundle-test-envsvc-token',
  'config-stubs-envsvc-token',
  'from-the-environment',
  // What the Secrets Manager tests read.
  'jwt-value',
  'token-value',
  // One character repeated.
  ...['s', 't', 'x', 'y', 'z'].map((c) => c.repeat(40)),
  'x'.repeat(32),
  'é'.repeat(16),
];

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

test('the digests in code are exactly those of the committed strings', () => {
  assert.deepEqual([...committedSecretDigests()].sort(), COMMITTED.map(sha256).sort());
  for (const value of COMMITTED) assert.equal(isCommittedSecret(value), true, value);
  assert.equal(isCommittedSecret(randomSecret()), false);
  // Compared exactly: no trimming, no case folding.
  assert.equal(isCommittedSecret(`${COMMITTED[0]} `), false);
  assert.equal(isCommittedSecret(String(COMMITTED[0]).toUpperCase()), false);
});

test('each committed value long enough to pass the length rules is refused under every secret key, naming it', () => {
  for (const value of COMMITTED.filter((v) => Buffer.byteLength(v) >= 32)) {
    for (const [variable, key] of [
      ['SVC_JWT_SECRET', 'auth.jwt_secret'],
      ['SVC_AUDIT_INGEST_TOKEN', 'audit.ingest_token'],
      ['SVC_ENVSVC_TOKEN', 'envsvc.token'],
    ] as const) {
      assert.throws(
        () => loadConfig({ env: { [variable]: value } }),
        (err: Error) => err.message.includes(`${key}: is a value committed to this repository`),
        `${key} = ${value}`,
      );
    }
  }
  // A secret of one's own loads.
  assert.ok(loadConfig({ env: { SVC_JWT_SECRET: randomSecret(), SVC_AUDIT_INGEST_TOKEN: randomSecret() } }));
});
