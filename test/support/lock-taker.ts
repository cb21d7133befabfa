// A process taking and releasing one lock in a loop, for the lock's crash test: `node lock-taker.ts <path>`.
import { fileURLToPath } from 'node:url';
import { withLock } from '#agent/spool/lock.ts';

export const LOCK_TAKER = fileURLToPath(import.meta.url);

if (import.meta.main) {
  const path = process.argv[2] as string;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  // Held for a millisecond at a time, so that a kill often lands with the lock held. "taking" on stdout once the
  // loop runs, so that the test's kill lands in it however long the process took to start.
  const hold = () => Atomics.wait(pause, 0, 0, 1);
  withLock(path, hold, { timeoutMs: 60_000 });
  process.stdout.write('taking\n');
  for (;;) withLock(path, hold, { timeoutMs: 60_000 });
}
