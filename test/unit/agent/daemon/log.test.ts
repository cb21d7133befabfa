// The daemon's log file is rotated by size: the current file and at most `files` older ones, newest first.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { rotatingLog } from '#agent/daemon/log.ts';

test('rotates past maxBytes, keeps `files` old ones, never splits a line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-log-'));
  try {
    const path = join(dir, 'logs', 'agent.log');
    const log = rotatingLog(path, { maxBytes: 1000, files: 2 });
    for (let i = 0; i < 100; i++) log.log('info', `line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}`);
    log.close();
    assert.ok(existsSync(`${path}.1`) && existsSync(`${path}.2`));
    assert.equal(existsSync(`${path}.3`), false, 'no more than two old files');
    for (const file of [path, `${path}.1`, `${path}.2`]) assert.ok(statSync(file).size <= 1000, file);
    const numbers = [`${path}.2`, `${path}.1`, path].flatMap((file) =>
      readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => {
          assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z info line \d{3} x{40}$/);
          return Number(/line (\d+)/.exec(line)?.[1]);
        }),
    );
    assert.deepEqual(
      numbers,
      Array.from({ length: numbers.length }, (_, i) => 100 - numbers.length + i),
      'in order, the newest kept',
    );
    assert.equal(numbers.at(-1), 99);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
