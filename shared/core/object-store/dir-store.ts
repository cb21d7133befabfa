// An object store in a directory (target = "dir"): each key a file under the root. A file is written beside its
// final name and renamed over it, so a crash never leaves half an object under a key.
import type { Dirent } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { ObjectStore } from './store.ts';

export class DirectoryObjectStore implements ObjectStore {
  readonly location: string;

  constructor(root: string) {
    this.location = resolve(root);
  }

  private pathOf(key: string): string {
    const path = join(this.location, key);
    const inside = relative(this.location, path);
    if (inside.startsWith('..') || inside === '') throw new Error(`object key outside the directory: ${key}`);
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

  async list(prefix: string): Promise<string[]> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.location, { recursive: true, withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => relative(this.location, join(entry.parentPath, entry.name)).split(sep).join('/'))
      .filter((key) => key.startsWith(prefix) && !key.endsWith('.partial'))
      .sort();
  }
}
