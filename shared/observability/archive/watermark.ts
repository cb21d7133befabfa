// How far the event archive has got (observability_archive_state, observability_archive_hours; migrations/
// 0014_event_archive.sql), without the archive itself: retention (shared/observability/partitions/maintenance.ts) asks it before it
// drops a day, and must not load the Parquet writer to do so.
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows } from '../../core/db/query.ts';
import { tsParam } from '../../core/db/sql-values.ts';

export const HOUR_MS = 3_600_000;

/** An instant given as epoch milliseconds (text) by the statements below: the same on every driver. */
const epochMs = (expression: SQL): SQL => sql`(extract(epoch FROM ${expression}) * 1000)::bigint::text`;
const fromMs = (ms: string | null | undefined): Date | null => (ms == null ? null : new Date(Number(ms)));

/** Every hour before it is archived (or had no event when the archive passed it); null before the first run. */
export async function archiveWatermark(db: Db): Promise<Date | null> {
  const [row] = await queryRows(
    db,
    sql`SELECT ${epochMs(sql`next_hour`)} AS ms FROM observability_archive_state`,
    { ms: col.nullable(col.text) },
  );
  return fromMs(row?.ms);
}

/**
 * Hours in [from, to) that hold events the archive does not have: the hour's count in observability_series (the
 * fold's, which only grows) is above the count it had when the hour was archived, or the hour was passed as empty.
 * Only as fresh as the last fold. Oldest first.
 */
export async function lateArchiveHours(db: Db, from: Date, to: Date, limit: number): Promise<Date[]> {
  const rows = await queryRows(
    db,
    sql`SELECT ${epochMs(sql`s.bucket`)} AS ms
      FROM (SELECT bucket, sum(calls) AS calls FROM observability_series
        WHERE grain = 'hour' AND bucket >= ${tsParam(from)} AND bucket < ${tsParam(to)} GROUP BY bucket) s
      LEFT JOIN observability_archive_hours a ON a.hour = s.bucket
      WHERE s.calls > coalesce(a.folded_calls, 0)
      ORDER BY s.bucket LIMIT ${limit}::int`,
    { ms: col.text },
  );
  return rows.map((r) => new Date(Number(r.ms)));
}

/**
 * Whether every event of [from, to) is in the archive: the watermark is past `to` and no hour of the range has
 * events that arrived after it was archived. Run after a fold (the late check reads the fold's counts).
 */
export async function isArchived(db: Db, from: Date, to: Date): Promise<boolean> {
  const watermark = await archiveWatermark(db);
  if (watermark === null || watermark.getTime() < to.getTime()) return false;
  return (await lateArchiveHours(db, from, to, 1)).length === 0;
}

export { epochMs, fromMs };
