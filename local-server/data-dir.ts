// npm start's local state: the data directory (data_dir) holds the embedded database with the first admin, and the
// JWT secret. `npm run reset` removes it, so that the next start begins from nothing; while a server runs on it
// (its pid file names a live process) the reset is refused, because the server would go on with deleted files.
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const PID_FILE = 'server.pid';

/** Marks the data directory as in use by this process, until the returned function (or the process) ends it. */
export function markRunning(dataDir: string): () => void {
  const file = join(dataDir, PID_FILE);
  writeFileSync(file, `${process.pid}\n`);
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
    } catch {
      // Already gone: a reset or another start removed it.
    }
  };
}

/** The pid of a live server using the data directory, if any. */
export function runningServer(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(join(dataDir, PID_FILE), 'utf8'), 10);
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

export type ResetOutcome = { removed: string } | { nothing: string } | { running: number; dir: string };

export function resetDataDir(dataDir: string): ResetOutcome {
  const dir = resolve(dataDir);
  if (!existsSync(dir)) return { nothing: dir };
  const pid = runningServer(dir);
  if (pid !== undefined) return { running: pid, dir };
  rmSync(dir, { recursive: true, force: true });
  return { removed: dir };
}
