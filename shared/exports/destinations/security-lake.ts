// Amazon Security Lake as a destination: OCSF events as Parquet objects in the lake's bucket, in the custom-source
// layout Security Lake reads (its user guide, "Collecting data from custom sources"): one custom source per OCSF class,
// under ext/<source name>/region=<region>/accountId=<account>/eventDay=<YYYYMMDD>/, each file holding one class,
// rows sorted by time. A batch's object is named by the events it holds, so a batch sent again (at-least-once
// delivery) rewrites the same object rather than adding a copy.
import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor } from '../../core/object-store/s3-client.ts';
import { toOcsfApiActivity } from '../ocsf.ts';
import type { OcsfClassKey, OcsfMetadata } from '../ocsf-objects.ts';
import { encodeOcsfParquet } from '../ocsf-parquet.ts';
import type { ExportSource } from '../source.ts';
import type { DeliveryResult, Destination } from './destination.ts';

export interface SecurityLakeSettings {
  /** The lake's bucket (aws-security-data-lake-<region>-<id>). */
  bucket: string;
  /** The Region and account the custom sources were created for: the partition values Security Lake expects. */
  region: string;
  account_id: string;
  /** The custom source of each class we send; tool calls need apiActivity. */
  sources: Partial<Record<OcsfClassKey, string>>;
  /** An S3-compatible endpoint instead of AWS (s3rver locally and in the tests). */
  endpoint?: string;
}

/** An OCSF event as the lake partitions and names it. */
interface LakeEvent {
  time: number;
  metadata: Pick<OcsfMetadata, 'uid'>;
}

/** eventDay: the UTC day of the event's time, YYYYMMDD. */
export const eventDayOf = (timeMs: number): string =>
  new Date(timeMs).toISOString().slice(0, 10).replaceAll('-', '');

/** The object key of a file of `events` (all of one day) for a custom source. */
export function securityLakeKey(
  settings: Pick<SecurityLakeSettings, 'region' | 'account_id'>,
  source: string,
  day: string,
  events: readonly LakeEvent[],
): string {
  const digest = createHash('sha256');
  for (const e of events) digest.update(e.metadata.uid).update('\n');
  const name = digest.digest('hex').slice(0, 32);
  return `ext/${source}/region=${settings.region}/accountId=${settings.account_id}/eventDay=${day}/${name}.parquet`;
}

/** HTTP statuses after which the same request can succeed later. */
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

function failureOf(err: unknown): DeliveryResult {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const name = (err as { name?: string }).name ?? 'Error';
  if (status === undefined) return { ok: false, permanent: false, message: `S3 unreachable (${name})` };
  return {
    ok: false,
    status,
    permanent: !RETRYABLE.has(status),
    message: `S3 answered ${status} (${name})`,
  };
}

export class SecurityLakeDestination implements Destination {
  readonly kind = 'security_lake' as const;
  private readonly client: S3Client;
  private readonly settings: SecurityLakeSettings;

  constructor(settings: SecurityLakeSettings, client?: S3Client) {
    this.settings = settings;
    for (const [field, value] of [
      ['bucket', settings.bucket],
      ['region', settings.region],
      ['account_id', settings.account_id],
    ] as const) {
      if (!value) throw new Error(`security_lake.${field} is empty`);
    }
    this.client = client ?? s3ClientFor(settings);
  }

  /** Tool calls, as API Activity, to the apiActivity custom source. */
  send(batch: readonly ExportSource[], signal?: AbortSignal): Promise<DeliveryResult> {
    return this.sendOcsf('apiActivity', batch.map(toOcsfApiActivity), signal);
  }

  /** Events of one class to its custom source: one Parquet object per event day, rows by time. */
  async sendOcsf(
    key: OcsfClassKey,
    events: readonly LakeEvent[],
    signal?: AbortSignal,
  ): Promise<DeliveryResult> {
    const source = this.settings.sources[key];
    if (!source) {
      return { ok: false, permanent: true, message: `security_lake.sources has no custom source for ${key}` };
    }
    const days = new Map<string, LakeEvent[]>();
    for (const event of events) {
      const day = eventDayOf(event.time);
      const list = days.get(day);
      if (list) list.push(event);
      else days.set(day, [event]);
    }
    try {
      for (const [day, list] of days) {
        list.sort((a, b) => a.time - b.time || (a.metadata.uid < b.metadata.uid ? -1 : 1));
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.settings.bucket,
            Key: securityLakeKey(this.settings, source, day, list),
            Body: encodeOcsfParquet(key, list),
            ContentType: 'application/vnd.apache.parquet',
          }),
          signal ? { abortSignal: signal } : {},
        );
      }
    } catch (err) {
      return failureOf(err);
    }
    return { ok: true };
  }

  /** Closes its connections (tests; a Lambda keeps the client for the next invocation). */
  close(): void {
    this.client.destroy();
  }
}
