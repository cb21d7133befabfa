// An object store in S3 (target = "s3"), or in an S3-compatible server (endpoint: s3rver locally and in the tests),
// through the real @aws-sdk/client-s3. open-store.ts imports it on demand, so only the functions that open an S3
// store carry the S3 client.
import {
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientFor } from './s3-client.ts';
import type { ObjectStore, ObjectStoreSettings } from './store.ts';

export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;

  /** `setting` names the config section in the message for a missing bucket (e.g. "events.archive"). */
  constructor(
    settings: Pick<ObjectStoreSettings, 'bucket' | 'prefix' | 'endpoint' | 'region'>,
    setting = 'events.archive',
  ) {
    if (!settings.bucket) {
      throw new Error(`${setting}.bucket is empty: set it, or deploy the stack, which passes its bucket`);
    }
    this.bucket = settings.bucket;
    this.location = `s3://${settings.bucket}/${settings.prefix}`;
    this.client = s3ClientFor(settings);
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

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  /** Closes its connections (tests and benchmarks; Lambda keeps the client for the next invocation). */
  close(): void {
    this.client.destroy();
  }
}
