// A cross-process lock on one file, synchronous so that a hook can take it without an event loop turn. The holder
// writes its pid to a file of its own, then hard-links it to the lock's name (atomic, and EEXIST when held), so the
// lock is never seen empty: a holder killed between creating and writing it would otherwise leave a lock with no
// pid, which only the age rule could break. Removed on release. A holder killed
// with the lock held leaves the file behind: the lock of a process that no longer exists, or older than `staleMs`,
// is taken over. The spool takes it only to change its state (rotate a segment, drop the oldest, move the cursor),
// never to append.
import { linkSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

export class LockTimeout extends Error {
  override name = 'LockTimeout';
}

export function withLock<T>(
  path: string,
  fn: () => T,
  options: { timeoutMs?: number; staleMs?: number } = {},
): T {
  const { timeoutMs = 2000, staleMs = 10_000 } = options;
  const deadline = Date.now() + timeoutMs;
  const mine = `${path}.${process.pid}`;
  writeFileSync(mine, `${process.pid}\n`);
  try {
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      try {
        linkSync(mine, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      breakIfStale(path, staleMs);
      if (Date.now() >= deadline) throw new LockTimeout(`could not lock ${path} within ${timeoutMs} ms`);
      Atomics.wait(pause, 0, 0, wait);
    }
  } finally {
    unlinkSync(mine);
  }
  try {
    return fn();
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // Taken over as stale while held: nothing of ours to remove.
    }
  }
}

function holderGone(path: string): boolean {
  const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function breakIfStale(path: string, staleMs: number): void {
  try {
    if (Date.now() - statSync(path).mtimeMs < staleMs && !holderGone(path)) return;
    // Renamed away first, so that of two processes breaking it at once only one succeeds.
    const aside = `${path}.stale-${process.pid}`;
    renameSync(path, aside);
    unlinkSync(aside);
  } catch {
    // Released or taken over meanwhile.
  }
}
