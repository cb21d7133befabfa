// The store events.archive names: none, a directory, or S3 (loaded only then).
import type { Config } from '../../core/config/schema.ts';
import { DirectoryArchiveStore } from './dir-store.ts';
import type { ArchiveStore } from './store.ts';

export async function openArchiveStore(
  archive: Config['events']['archive'],
): Promise<ArchiveStore | undefined> {
  if (archive.target === 'none') return undefined;
  if (archive.target === 'dir') return new DirectoryArchiveStore(archive.dir);
  const { S3ArchiveStore } = await import('./s3-store.ts');
  return new S3ArchiveStore(archive);
}
