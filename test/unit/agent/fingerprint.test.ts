// The config fingerprint (agent/discovery/fingerprint.ts): HMAC-SHA256 of the whole entry under the device's key,
// which is made once, owner-only, and reused; any change in the entry changes it; another key gives another one.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { configFingerprint, loadFingerprintKey } from '#agent/discovery/fingerprint.ts';
import { runs } from '#test/support/runs.ts';

const entry = {
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-github'],
  env: { GITHUB_TOKEN: 'ghp_x' },
};

test('the key is made once in the state dir, owner-only, and read back after', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-key-'));
  try {
    const state = join(dir, 'state');
    const key = loadFingerprintKey(state);
    assert.equal(key.length, 32);
    assert.equal(statSync(join(state, 'fingerprint.key')).mode & 0o777, 0o600);
    assert.equal(statSync(state).mode & 0o777, 0o700);
    assert.deepEqual(loadFingerprintKey(state), key);
    assert.equal(readFileSync(join(state, 'fingerprint.key'), 'utf8').trim(), key.toString('hex'));
    writeFileSync(join(state, 'fingerprint.key'), 'not a key\n');
    assert.throws(() => loadFingerprintKey(state), /remove it to make a new one/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('HMAC-SHA256 over the canonical JSON of {name, config}: key order does not matter, the key does', () => {
  const key = Buffer.alloc(32, 7);
  const fp = configFingerprint(key, 'github', entry);
  assert.match(fp, /^[0-9a-f]{64}$/);
  const canonical =
    '{"config":{"args":["-y","@modelcontextprotocol/server-github"],"command":"npx","env":{"GITHUB_TOKEN":"ghp_x"}},"name":"github"}';
  assert.equal(fp, createHmac('sha256', key).update(canonical).digest('hex'));
  const reordered = { env: entry.env, args: entry.args, command: entry.command };
  assert.equal(configFingerprint(key, 'github', reordered), fp);
  assert.notEqual(configFingerprint(Buffer.alloc(32, 8), 'github', entry), fp);
  assert.notEqual(configFingerprint(key, 'github-fork', entry), fp);
  // TOML values JSON has no form for still fingerprint (and differ from their text).
  assert.match(
    configFingerprint(key, 'x', { timeout: Number.POSITIVE_INFINITY, big: 10n }),
    /^[0-9a-f]{64}$/,
  );
});

test('property: changing any value of an entry changes its fingerprint', () => {
  const key = Buffer.alloc(32, 1);
  const json = fc.dictionary(
    fc.string({ maxLength: 8 }),
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 })),
    { minKeys: 1, maxKeys: 6 },
  );
  fc.assert(
    fc.property(json, fc.nat(), fc.string({ minLength: 1 }), (config, pick, extra) => {
      const keys = Object.keys(config);
      const k = keys[pick % keys.length] as string;
      const changed = { ...config, [k]: JSON.stringify(config[k]) + extra };
      assert.notEqual(configFingerprint(key, 'n', changed), configFingerprint(key, 'n', config));
    }),
    { numRuns: runs(300) },
  );
});
