// The store a config section names: none, a directory, or S3 (its client loaded only then).
import { DirectoryObjectStore } from './dir-store.ts';
import type { ObjectStore, ObjectStoreSettings } from './store.ts';

/** `setting` names the section in messages (e.g. "events.archive"). */
export async function openObjectStore(
  settings: ObjectStoreSettings,
  setting: string,
): Promise<ObjectStore | undefined> {
  if (settings.target === 'none') return undefined;
  if (settings.target === 'dir') return new DirectoryObjectStore(settings.dir);
  const { S3ObjectStore } = await import('./s3-store.ts');
  return new S3ObjectStore(settings, setting);
}
