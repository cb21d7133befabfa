// The daemon's log: one line per thing it did or failed to do, in <state>/logs/agent.log, rotated by size (agent.log.1
// is the previous file, up to `files` of them kept), so that a laptop's disk never fills with it. Secrets never reach
// it: only addresses, counts, codes and the service's own messages.
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export type LogLevel = 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, message: string): void;
  close(): void;
}

export interface RotatingLogOptions {
  /** Rotate when the file would grow past this size. */
  maxBytes?: number;
  /** How many rotated files to keep besides the current one. */
  files?: number;
  /** Also write each line here (a terminal that runs `agent run` by hand). */
  echo?: (line: string) => void;
}

export function rotatingLog(path: string, options: RotatingLogOptions = {}): Logger {
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const files = options.files ?? 3;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd = openSync(path, 'a', 0o600);
  let size = statSync(path).size;

  const rotate = () => {
    closeSync(fd);
    rmSync(`${path}.${files}`, { force: true });
    for (let i = files - 1; i >= 1; i--) {
      try {
        renameSync(`${path}.${i}`, `${path}.${i + 1}`);
      } catch {}
    }
    renameSync(path, `${path}.1`);
    fd = openSync(path, 'a', 0o600);
    size = 0;
  };

  return {
    log(level, message) {
      const line = `${new Date().toISOString()} ${level} ${message.replace(/\n/g, ' ')}\n`;
      const bytes = Buffer.byteLength(line);
      if (size > 0 && size + bytes > maxBytes) rotate();
      writeSync(fd, line);
      size += bytes;
      options.echo?.(line.trimEnd());
    },
    close() {
      closeSync(fd);
    },
  };
}
