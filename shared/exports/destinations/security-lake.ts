// Amazon Security Lake as a destination: OCSF events as Parquet objects in the lake's bucket, in the custom-source
// layout Security Lake reads (its user guide, "Collecting data from custom sources"): one custom source per OCSF class,
// under ext/<source name>/region=<region>/accountId=<account>/eventDay=<YYYYMMDD>/, each file holding one class,
// rows sorted by time. A batch's object is named by the events it holds, so a batch sent again (at-least-once
// delivery) rewrites the same object rather than adding a copy.
import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ClientFor } from '../../core/object-store/s3-client.ts';
import { toOcsfApiActivity } from '../ocsf.ts';
import type { OcsfClassKey } from '../ocsf-objects.ts';
import { encodeOcsfParquet } from '../ocsf-parquet.ts';
import type { ExportSource } from '../source.ts';
import type { DeliveryResult, Destination, OcsfEvent } from './destination.ts';
import type { SecurityLakeSettings as SecurityLakeSettingsInput } from './settings.ts';

/** The settings as settings.ts validates them, with any subset of the classes' sources (tests send one class). */
export type SecurityLakeSettings = Omit<SecurityLakeSettingsInput, 'sources'> & {
  sources: Partial<Record<OcsfClassKey, string | undefined>>;
};

/** eventDay: the UTC day of the event's time, YYYYMMDD. */
export const eventDayOf = (timeMs: number): string =>
  new Date(timeMs).toISOString().slice(0, 10).replaceAll('-', '');

/** The object key of a file of `events` (all of one day) for a custom source. */
export function securityLakeKey(
  settings: Pick<SecurityLakeSettings, 'region' | 'account_id'>,
  source: string,
  day: string,
  events: readonly OcsfEvent[],
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
  // A refused or dropped connection is a plain Error whose code (ECONNREFUSED…) says more than its name.
  const code = (err as { code?: unknown }).code;
  const why = name === 'Error' && typeof code === 'string' ? code : name;
  if (status === undefined) return { ok: false, permanent: false, message: `S3 unreachable (${why})` };
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
  private readonly timeoutMs: number | undefined;

  /** `timeoutMs` bounds each send when the caller gives no signal of its own; `endpoint` is the operator's
   * S3-compatible server (config `exports.security_lake_endpoint`), never a destination's setting, since the
   * requests are signed with the function's own credentials. */
  constructor(
    settings: SecurityLakeSettings,
    options: { client?: S3Client; timeoutMs?: number; endpoint?: string } = {},
  ) {
    this.settings = settings;
    this.timeoutMs = options.timeoutMs;
    for (const [field, value] of [
      ['bucket', settings.bucket],
      ['region', settings.region],
      ['account_id', settings.account_id],
    ] as const) {
      if (!value) throw new Error(`security_lake.${field} is empty`);
    }
    this.client =
      options.client ??
      s3ClientFor({ region: settings.region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  }

  /** Tool calls, as API Activity, to the apiActivity custom source. */
  send(batch: readonly ExportSource[], signal?: AbortSignal): Promise<DeliveryResult> {
    return this.sendOcsf('apiActivity', batch.map(toOcsfApiActivity), signal);
  }

  /** Events of one class to its custom source: one Parquet object per event day, rows by time. */
  async sendOcsf(
    key: OcsfClassKey,
    events: readonly OcsfEvent[],
    signal?: AbortSignal,
  ): Promise<DeliveryResult> {
    const source = this.settings.sources[key];
    if (!source) {
      return { ok: false, permanent: true, message: `security_lake.sources has no custom source for ${key}` };
    }
    const days = new Map<string, OcsfEvent[]>();
    for (const event of events) {
      const day = eventDayOf(event.time);
      const list = days.get(day);
      if (list) list.push(event);
      else days.set(day, [event]);
    }
    const abortSignal = signal ?? (this.timeoutMs ? AbortSignal.timeout(this.timeoutMs) : undefined);
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
          abortSignal ? { abortSignal } : {},
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
