// A store of whole objects by key, for what the service keeps outside its database: the event archive
// (shared/observability/archive/) and the audit chain's anchors (shared/audit/anchors/). A directory
// (dir-store.ts) or S3 and S3-compatible servers (s3-store.ts); open-store.ts picks one from a setting.

export interface ObjectStore {
  /** Writes the object whole, replacing any object of the same key. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** The keys that start with `prefix`, in ascending order. */
  list(prefix: string): Promise<string[]>;
  /** Where the store is, for logs and pages: "s3://bucket/prefix" or a directory. */
  readonly location: string;
}

/** Where a store is, as a config section names it (events.archive, audit.anchors). */
export interface ObjectStoreSettings {
  target: 'none' | 'dir' | 's3';
  dir: string;
  bucket: string;
  prefix: string;
  /** An S3-compatible endpoint (s3rver locally); empty: AWS S3 of the region. */
  endpoint: string;
  region: string;
}
