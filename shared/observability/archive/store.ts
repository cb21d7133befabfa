// What the event archive writes to: an object store (shared/core/object-store/). The archive (archive.ts) knows keys
// and bytes only; where they go is the store's business.
import { resolve } from 'node:path';
import type { Config } from '../../core/config/schema.ts';
import type { ObjectStore } from '../../core/object-store/store.ts';

export type ArchiveStore = ObjectStore;

/** An archived object in a manifest: its key, size and SHA-256 (hex). */
export interface ArchivedObject {
  key: string;
  bytes: number;
  sha256: string;
}

/**
 * The manifest of one archived hour (<prefix>/events/dt=YYYY-MM-DD/hour=HH/_manifest.json: Athena, like Hive,
 * skips files whose name starts with "_", so the manifest sits beside the Parquet it describes without being read
 * as data). It holds nothing that changes between two exports of the same rows, so a rerun writes the very same
 * manifest.
 */
export interface HourManifest {
  schema_version: number;
  /** The hour's first instant, ISO 8601 UTC. */
  hour: string;
  rows: number;
  objects: ArchivedObject[];
}

/** The name of each hour's manifest (see HourManifest). */
export const MANIFEST_NAME = '_manifest.json';

/** The directory of every archived event under the prefix: <prefix>/events (the Glue table's location). */
const eventsDirectory = (prefix: string): string => `${prefix ? `${prefix}/` : ''}events`;

/** The directory of one hour's objects, Hive-partitioned for Athena: <prefix>/events/dt=YYYY-MM-DD/hour=HH. */
export function hourDirectory(prefix: string, hour: Date): string {
  const iso = hour.toISOString();
  return `${eventsDirectory(prefix)}/dt=${iso.slice(0, 10)}/hour=${iso.slice(11, 13)}`;
}

/**
 * Where events.archive keeps the archived events, as an admin would open it: s3://<bucket>/<prefix>/events/ (the
 * location of the stack's Glue table agent_control_plane_archive.events) or the directory; null without an archive.
 */
export function archiveLocation(
  archive: Pick<Config['events']['archive'], 'target' | 'dir' | 'bucket' | 'prefix'>,
): string | null {
  if (archive.target === 'none') return null;
  if (archive.target === 'dir') return `${resolve(archive.dir, eventsDirectory(archive.prefix))}/`;
  return `s3://${archive.bucket}/${eventsDirectory(archive.prefix)}/`;
}
