// The event archive in S3 (events.archive.target = "s3"), or in an S3-compatible server (events.archive.endpoint:
// s3rver locally and in the tests), through the real @aws-sdk/client-s3. Only the archive function loads it
// (shared/observability/archive/open-store.ts imports it on demand), so no other bundle carries the S3 client.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../core/config/schema.ts';
import { s3ClientFor } from '../../core/s3-client.ts';
import type { ArchiveStore } from './store.ts';

type ArchiveConfig = Config['events']['archive'];

export class S3ArchiveStore implements ArchiveStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(archive: Pick<ArchiveConfig, 'bucket' | 'prefix' | 'endpoint' | 'region'>) {
    if (!archive.bucket) {
      throw new Error(
        'events.archive.bucket is empty: set it, or deploy the stack, which passes its bucket as SVC_ARCHIVE_BUCKET',
      );
    }
    this.bucket = archive.bucket;
    this.location = `s3://${archive.bucket}/${archive.prefix}`;
    this.client = s3ClientFor(archive);
  }

  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }),
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return out.Body ? await out.Body.transformToByteArray() : undefined;
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  /** Closes its connections (tests and benchmarks; Lambda keeps the client for the next invocation). */
  close(): void {
    this.client.destroy();
  }
}
