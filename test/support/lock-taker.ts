// A process taking and releasing one lock in a loop, for the lock's crash test: `node lock-taker.ts <path>`.
import { fileURLToPath } from 'node:url';
import { withLock } from '#agent/spool/lock.ts';

export const LOCK_TAKER = fileURLToPath(import.meta.url);

if (import.meta.main) {
  const path = process.argv[2] as string;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  // Held for a millisecond at a time, so that a kill often lands with the lock held.
  for (;;) withLock(path, () => Atomics.wait(pause, 0, 0, 1), { timeoutMs: 60_000 });
}
