// The hook's own failures go to a local log, never to the client: a line per failure, without the payload (it may
// hold secrets), kept under 1 MiB by moving the full log to hook-errors.log.1.
import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LOG_BYTES = 1024 * 1024;

export const errorLogPath = (stateDir: string): string => join(stateDir, 'logs', 'hook-errors.log');

export function logHookError(stateDir: string, where: string, message: string): void {
  const path = errorLogPath(stateDir);
  try {
    try {
      if (statSync(path).size > MAX_LOG_BYTES) renameSync(path, `${path}.1`);
    } catch {
      mkdirSync(join(stateDir, 'logs'), { recursive: true, mode: 0o700 });
    }
    appendFileSync(
      path,
      `${new Date().toISOString()} ${where}: ${message.replace(/\s+/g, ' ').slice(0, 500)}\n`,
      {
        mode: 0o600,
      },
    );
  } catch {
    // Nowhere left to report to; the tool call goes on.
  }
}
