// The event archive in a directory (events.archive.target = "dir"): each key a file under the root. A file is
// written beside its final name and renamed over it, so a crash never leaves half an object under a key.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { ArchiveStore } from './store.ts';

export class DirectoryArchiveStore implements ArchiveStore {
  readonly location: string;

  constructor(root: string) {
    this.location = resolve(root);
  }

  private pathOf(key: string): string {
    const path = join(this.location, key);
    const inside = relative(this.location, path);
    if (inside.startsWith('..') || inside === '')
      throw new Error(`archive key outside the directory: ${key}`);
    return path;
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, body);
    await rename(partial, path);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.pathOf(key)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}
