// One daemon per state directory (<state>/daemon.pid): two would read the same spool and acknowledge each other's
// batches. A pid file left by a daemon that died (kill -9, a power cut) is taken over.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from './status.ts';

export class DaemonRunning extends Error {
  override name = 'DaemonRunning';
}

/** Takes the state directory for this process; returns the release. */
export function lockStateDir(stateDir: string): () => void {
  const path = join(stateDir, 'daemon.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
        } catch {}
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid))
        throw new DaemonRunning(
          `an agent daemon is already running for ${stateDir} (pid ${pid}); stop it first (agent service uninstall, or kill ${pid})`,
        );
      rmSync(path, { force: true });
    }
  }
  throw new DaemonRunning(`could not take ${path}: another daemon is starting for ${stateDir}`);
}
