// Watching the AI clients' config files for changes. Each file's directory is watched, not the file: editors save
// by writing a new file and renaming it over the old one, which a watch on the old file never sees, and a file that
// does not exist yet cannot be watched at all. fs.watch still misses changes on some file systems (network homes,
// some containers), so the daemon also rescans on a timer; a directory that cannot be watched is left to that.
import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface FileWatcher {
  /** Watches exactly these files from now on. */
  update(paths: readonly string[]): void;
  /** How many directories are watched. */
  readonly directories: number;
  close(): void;
}

/**
 * Calls `onChange` with the path of a watched file that was created, changed, renamed or removed. At most
 * `maxDirectories` directories are watched (each holds an inotify watch or a file descriptor); the rest are left to
 * the rescan.
 */
export function watchFiles(
  onChange: (path: string) => void,
  onError: (message: string) => void,
  maxDirectories = 512,
): FileWatcher {
  const watched = new Map<string, { watcher: FSWatcher; names: Set<string> }>();
  const failed = new Set<string>();

  const open = (dir: string, names: Set<string>) => {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => {
        const entry = watched.get(dir);
        const name = filename?.toString();
        // Without a file name (some platforms), any change in the directory may be one of ours.
        if (!entry) return;
        if (!name) for (const n of entry.names) onChange(join(dir, n));
        else if (entry.names.has(name)) onChange(join(dir, name));
      });
      watcher.on('error', (err) => {
        watcher.close();
        watched.delete(dir);
        onError(`stopped watching ${dir}: ${err.message}`);
      });
      watched.set(dir, { watcher, names });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A directory that does not exist yet is normal (a client not installed); the rescan finds it later.
      if (code !== 'ENOENT' && !failed.has(dir)) onError(`cannot watch ${dir}: ${(err as Error).message}`);
      failed.add(dir);
    }
  };

  return {
    update(paths) {
      const wanted = new Map<string, Set<string>>();
      for (const path of paths) {
        const dir = dirname(path);
        const names = wanted.get(dir) ?? new Set<string>();
        names.add(basename(path));
        wanted.set(dir, names);
      }
      for (const [dir, entry] of watched) {
        if (!wanted.has(dir)) {
          entry.watcher.close();
          watched.delete(dir);
        }
      }
      for (const [dir, names] of wanted) {
        const entry = watched.get(dir);
        if (entry) entry.names = names;
        else if (watched.size < maxDirectories) open(dir, names);
      }
    },
    get directories() {
      return watched.size;
    },
    close() {
      for (const { watcher } of watched.values()) watcher.close();
      watched.clear();
    },
  };
}
