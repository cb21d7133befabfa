// What the event archive writes to: a store of whole objects by key. The archive (event-archive.ts) knows keys and
// bytes only; where they go is a store's business: a directory (shared/observability/archive/dir-store.ts) or S3 and S3-compatible
// servers (shared/observability/archive/s3-store.ts).
import { resolve } from 'node:path';
import type { Config } from '../../core/config/schema.ts';

export interface ArchiveStore {
  /** Writes the object whole, replacing any object of the same key. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Where the archive is, for logs and pages: "s3://bucket/prefix" or a directory. */
  readonly location: string;
}

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
