// The device settings that `agent register` writes: the signed-in person becomes actorEmail, unless the file already
// names someone (an admin's choice) or cannot be read as an object (left as it is); the other keys keep their values.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { adoptActorEmail, readSettings, settingsPath } from '#agent/hooks/settings.ts';

function stateDir(config?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-settings-'));
  if (config !== undefined) writeFileSync(settingsPath(dir), config);
  return dir;
}

test('no config.json: it is created, owner-only, and the hook reads the email from it', () => {
  const dir = stateDir();
  try {
    assert.equal(adoptActorEmail(dir, 'ana@example.com'), 'ana@example.com');
    assert.equal(statSync(settingsPath(dir)).mode & 0o777, 0o600);
    assert.deepEqual(readSettings(dir).settings.actorEmail, 'ana@example.com');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the other settings keep their values', () => {
  const dir = stateDir('{"capture": {"toolInput": true}, "spool": {"maxBytes": 1048576}}');
  try {
    adoptActorEmail(dir, 'ana@example.com');
    assert.deepEqual(JSON.parse(readFileSync(settingsPath(dir), 'utf8')), {
      capture: { toolInput: true },
      spool: { maxBytes: 1048576 },
      actorEmail: 'ana@example.com',
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an actorEmail already set wins; a file that is not a JSON object is left alone', () => {
  for (const [config, answer] of [
    ['{"actorEmail": "it-set@example.com"}', 'it-set@example.com'],
    ['{"actorEmail": ', undefined],
    ['["not", "an", "object"]', undefined],
  ] as const) {
    const dir = stateDir(config);
    try {
      assert.equal(adoptActorEmail(dir, 'ana@example.com'), answer, config);
      assert.equal(readFileSync(settingsPath(dir), 'utf8'), config, 'the file is unchanged');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
