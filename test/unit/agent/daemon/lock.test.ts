// One daemon per state directory; a pid file left by a daemon that died is taken over.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DaemonRunning, lockStateDir } from '#agent/daemon/lock.ts';

test('a second daemon is refused naming the first; released, the directory is free again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-lock-'));
  try {
    // A live process that is not this one: the parent of this test process.
    writeFileSync(join(dir, 'daemon.pid'), `${process.ppid}\n`);
    assert.throws(
      () => lockStateDir(dir),
      (err: Error) => err instanceof DaemonRunning && err.message.includes(`pid ${process.ppid}`),
    );
    rmSync(join(dir, 'daemon.pid'));
    const release = lockStateDir(dir);
    assert.equal(readFileSync(join(dir, 'daemon.pid'), 'utf8').trim(), String(process.pid));
    release();
    assert.equal(existsSync(join(dir, 'daemon.pid')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pid file of a daemon that died is taken over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-lock-'));
  try {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(join(dir, 'daemon.pid'), `${dead.stdout}\n`);
    const release = lockStateDir(dir);
    assert.equal(readFileSync(join(dir, 'daemon.pid'), 'utf8').trim(), String(process.pid));
    release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
