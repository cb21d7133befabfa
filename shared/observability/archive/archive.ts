// The event archive: each closed hour of events as one Parquet file plus a manifest, under
// Hive-partitioned keys that Athena reads through the stack's Glue table (infra/constructs/event-archive.ts):
// <prefix>/events/dt=YYYY-MM-DD/hour=HH/part-0000.parquet and .../_manifest.json. Design: docs/observability.md
// (Archive) and docs/operations.md.
//
// * Closed hours. An hour is archived once events.archive.delay has passed since its end. Devices send events late
//   (offline laptops, retries), and ingest accepts any event_time within the retention window, so an event can still
//   arrive for an hour already archived. Such an hour is archived again, whole: the fold's count of the hour
//   (observability_series, which only grows) is recorded with the hour, and a larger count later marks it late
//   (shared/observability/archive/watermark.ts). Ingest refuses events older than the window (shared/observability/retention.ts), so none arrives
//   for a day retention has dropped; retention rechecks each day's rows against its manifests under a lock.
// * Exactly once. Keys are deterministic and each hour is written whole (its rows, then its manifest), so a rerun or
//   a crash mid-hour rewrites the same objects; a manifest holds no time of writing, so a rerun writes the same
//   manifest too. Every hour is exported inside a transaction that holds the state row (FOR UPDATE SKIP LOCKED): an
//   overlapping run finds it locked and stops, and the watermark moves only when the hour's objects are written.
// * Bounded. At most events.archive.max_hours_per_run hours per call, from the watermark on; hours without events
//   are passed in one step.
import { sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows } from '../../core/db/query.ts';
import { jsonParam, tsParam } from '../../core/db/sql-values.ts';
import { listEventPartitions } from '../partitions/partitions.ts';
import { eventRetentionCutoff } from '../retention.ts';
import {
  ARCHIVE_SCHEMA_VERSION,
  ARCHIVED_EVENT_ROW,
  type ArchivedEventRow,
  encodeEventsParquet,
  sha256Hex,
} from './parquet.ts';
import { type ArchiveStore, type HourManifest, hourDirectory, MANIFEST_NAME } from './store.ts';
import { epochMs, fromMs, HOUR_MS, lateArchiveHours } from './watermark.ts';

/**
 * Rows per statement while reading an hour: a page stays under the Data API's 1 MiB response even with every prompt
 * at its 4096-character bound.
 */
export const ARCHIVE_PAGE_ROWS = 200;

export interface ArchivedHour {
  hour: string;
  rows: number;
  /** Archived again: events arrived after it was first archived. */
  late: boolean;
  bytes: number;
}

export interface ArchiveRun {
  hours: ArchivedHour[];
  /** Another run held the archive: this one stopped. */
  busy: boolean;
  /** Every hour before it is archived. */
  watermark: string | null;
}

const floorHour = (ms: number): Date => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS);

/**
 * Archives closed hours: late hours first, then from the watermark on, at most events.archive.max_hours_per_run of
 * them, one transaction each. Throws when the store or the database fails: the hour being written is then left to
 * the next run, which writes it whole again. Run after a fold (late hours are found through the fold's counts).
 */
export async function archiveClosedHours(
  db: Db,
  store: ArchiveStore,
  config: Pick<Config, 'events'>,
  now: Date = new Date(),
): Promise<ArchiveRun> {
  const archive = config.events.archive;
  const closedBefore = floorHour(now.getTime() - archive.delay);
  // Hours of days that retention has dropped are gone from the database: never rewrite them. Retention drops days
  // before its cutoff only, and only those with a partition.
  const keptFrom = new Date(
    Math.min(eventRetentionCutoff(config, now).getTime(), (await oldestStoredDay(db)).getTime()),
  );
  const hours: ArchivedHour[] = [];
  let busy = false;
  let watermark: Date | null = null;
  while (hours.length < archive.max_hours_per_run) {
    const step = await db.transaction(async (tx): Promise<ArchivedHour | 'busy' | 'done'> => {
      const [state] = await queryRows(
        tx,
        sql`SELECT ${epochMs(sql`next_hour`)} AS ms FROM observability_archive_state FOR UPDATE SKIP LOCKED`,
        { ms: col.nullable(col.text) },
      );
      if (!state) return 'busy';
      watermark = fromMs(state.ms);
      if (watermark) {
        const [late] = await lateArchiveHours(tx, keptFrom, watermark, 1);
        if (late) return await exportHour(tx, store, archive.prefix, late, true);
      }
      const [first] = await queryRows(
        tx,
        sql`SELECT ${epochMs(sql`min(event_time)`)} AS ms FROM observability_events
          WHERE event_time >= ${tsParam(watermark ?? new Date(0))} AND event_time < ${tsParam(closedBefore)}`,
        { ms: col.nullable(col.text) },
      );
      const firstMs = fromMs(first?.ms);
      if (firstMs === null) {
        if (!watermark || watermark < closedBefore) {
          await setWatermark(tx, closedBefore);
          watermark = closedBefore;
        }
        return 'done';
      }
      const hour = floorHour(firstMs.getTime());
      const archived = await exportHour(tx, store, archive.prefix, hour, false);
      watermark = new Date(hour.getTime() + HOUR_MS);
      await setWatermark(tx, watermark);
      return archived;
    });
    if (step === 'busy') busy = true;
    if (typeof step === 'string') break;
    hours.push(step);
  }
  const mark = watermark as Date | null;
  return { hours, busy, watermark: mark ? mark.toISOString() : null };
}

/** The start of the oldest daily partition: hours before it were dropped by retention (or never stored by day). */
async function oldestStoredDay(db: Db): Promise<Date> {
  const oldest = (await listEventPartitions(db)).find((p) => p.from !== null);
  return oldest?.from ? new Date(oldest.from) : new Date(8.64e15);
}

async function setWatermark(db: Db, next: Date): Promise<void> {
  await db.execute(
    sql`UPDATE observability_archive_state SET next_hour = ${tsParam(next)}, updated_at = now()`,
  );
}

/** Writes one hour whole (its Parquet file, then its manifest) and records it. */
async function exportHour(
  db: Db,
  store: ArchiveStore,
  prefix: string,
  hour: Date,
  late: boolean,
): Promise<ArchivedHour> {
  // Read before the rows: an event stored after this count is either in the rows or counted later, which marks
  // the hour late (see lateArchiveHours).
  const [folded] = await queryRows(
    db,
    sql`SELECT coalesce(sum(calls), 0)::text AS n FROM observability_series
      WHERE grain = 'hour' AND bucket = ${tsParam(hour)}`,
    { n: col.text },
  );
  const rows = await readHour(db, hour);
  const parquet = encodeEventsParquet(rows);
  const directory = hourDirectory(prefix, hour);
  const partKey = `${directory}/part-0000.parquet`;
  await store.put(partKey, parquet, 'application/vnd.apache.parquet');
  const manifest: HourManifest = {
    schema_version: ARCHIVE_SCHEMA_VERSION,
    hour: hour.toISOString(),
    rows: rows.length,
    objects: [{ key: partKey, bytes: parquet.byteLength, sha256: sha256Hex(parquet) }],
  };
  await store.put(
    `${directory}/${MANIFEST_NAME}`,
    new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`),
    'application/json',
  );
  await db.execute(
    sql`INSERT INTO observability_archive_hours (hour, rows, folded_calls, manifest)
      VALUES (${tsParam(hour)}, ${rows.length}::bigint, ${folded?.n ?? '0'}::bigint, ${jsonParam(manifest)})
      ON CONFLICT (hour) DO UPDATE SET rows = EXCLUDED.rows, folded_calls = EXCLUDED.folded_calls,
        manifest = EXCLUDED.manifest, archived_at = now()`,
  );
  return { hour: hour.toISOString(), rows: rows.length, late, bytes: parquet.byteLength };
}

/**
 * The events of [hour, hour + 1h), ordered by (event_time, id), read in pages by that key. NULLS FIRST (neither
 * column is ever null) is the order of a backward scan of observability_events_time_idx (event_time DESC NULLS
 * LAST, id DESC NULLS LAST): each page is one index range scan; with the default NULLS LAST every page sorted the rest
 * of its hour.
 */
export async function readHour(db: Db, hour: Date): Promise<ArchivedEventRow[]> {
  const end = new Date(hour.getTime() + HOUR_MS);
  const rows: ArchivedEventRow[] = [];
  let after: { us: string; id: string } | undefined;
  for (;;) {
    const page = await queryRows(
      db,
      sql`SELECT id::text AS id, event_id::text AS event_id, device_id::text AS device_id, serial_number, source_ip,
          (extract(epoch FROM received_at) * 1000000)::bigint::text AS received_us,
          (extract(epoch FROM event_time) * 1000000)::bigint::text AS event_us,
          agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
          session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills::text AS skills, prompt,
          prompt_truncated, metadata::text AS metadata
        FROM observability_events
        WHERE event_time >= ${tsParam(hour)} AND event_time < ${tsParam(end)}
          ${
            after
              ? sql`AND (event_time, id) > (timestamptz 'epoch' + ${after.us}::bigint * interval '1 microsecond',
                  ${after.id}::bigint)`
              : sql``
          }
        ORDER BY event_time NULLS FIRST, id NULLS FIRST LIMIT ${ARCHIVE_PAGE_ROWS}::int`,
      ARCHIVED_EVENT_ROW,
    );
    rows.push(...page);
    const last = page.at(-1);
    if (!last || page.length < ARCHIVE_PAGE_ROWS) return rows;
    after = { us: last.event_us, id: last.id };
  }
}

/** An archived hour's manifest and rows' Parquet bytes, read back from the store (tests, benchmarks, checks). */
export async function readArchivedHour(
  store: ArchiveStore,
  prefix: string,
  hour: Date,
): Promise<{ manifest: HourManifest; parts: Uint8Array[] } | undefined> {
  const directory = hourDirectory(prefix, hour);
  const raw = await store.get(`${directory}/${MANIFEST_NAME}`);
  if (!raw) return undefined;
  const manifest = JSON.parse(new TextDecoder().decode(raw)) as HourManifest;
  const parts: Uint8Array[] = [];
  for (const object of manifest.objects) {
    const bytes = await store.get(object.key);
    if (!bytes || sha256Hex(bytes) !== object.sha256)
      throw new Error(`archived object ${object.key} is missing or differs from its manifest`);
    parts.push(bytes);
  }
  return { manifest, parts };
}
