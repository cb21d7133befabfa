// The spool's cross-process lock: a holder killed at any point, even between taking the lock and saying who holds
// it, never leaves a lock that the next process must wait out.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LockTimeout, withLock } from '#agent/spool/lock.ts';
import { LOCK_TAKER } from '#test/support/lock-taker.ts';
import { runs } from '#test/support/runs.ts';

test('a holder killed (SIGKILL) at a random point: the next process takes the lock at once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  const path = join(dir, 'lock');
  const kills = runs(20, { variable: 'LOCK_CRASH_RUNS', least: 10 });
  let heldAtKill = 0;
  for (let i = 0; i < kills; i++) {
    const child = spawn(process.execPath, [LOCK_TAKER, path], { stdio: ['ignore', 'pipe', 'ignore'] });
    await once(child.stdout, 'data');
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 50)));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    if (readdirSync(dir).includes('lock')) heldAtKill++;
    // Well under the 10 s age rule: only a lock that names its (dead) holder can be broken this fast.
    withLock(path, () => undefined, { timeoutMs: 300 });
  }
  t.diagnostic(`${kills} kills, ${heldAtKill} with the lock held`);
  assert.ok(heldAtKill > 0, 'no kill landed while the lock was held: the test proved nothing');
});

test('a lock held by a live process is not taken; one older than the age rule is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'));
  const path = join(dir, 'lock');
  writeFileSync(path, `${process.ppid}\n`);
  assert.throws(() => withLock(path, () => undefined, { timeoutMs: 50 }), LockTimeout);
  assert.equal(
    withLock(path, () => 'taken', { timeoutMs: 200, staleMs: 0 }),
    'taken',
  );
});
