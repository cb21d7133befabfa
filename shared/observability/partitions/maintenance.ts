// The events table is partitioned by UTC day of event_time (migrations/0009_events_partitioned.sql). This is its
// scheduled maintenance: partitions are created ahead, so ingest always finds the day of a current event, and a day
// whose events landed in the default partition (an event far from now, sent before its day had a partition) gets
// its partition and its rows. Retention drops the partitions past events.retention whole, with an audit record
// each, and deletes rollup and series rows past events.rollup_retention. Design: docs/observability.md
// (Partitions, Retention).
import { sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../../audit/audit.ts';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { sqlState } from '../../core/db/errors.ts';
import { col, queryRows } from '../../core/db/query.ts';
import { jsonParam, tsParam } from '../../core/db/sql-values.ts';
import { undeliveredIn } from '../../exports/positions.ts';
import { isArchived } from '../archive/watermark.ts';
import { eventRetentionCutoff } from '../retention.ts';
import { unfoldedSql } from '../rollups/rollups.ts';
import { type EventPartition, listEventPartitions } from './partitions.ts';

const DAY_MS = 86_400_000;
/** Who drops partitions in the audit log (the same as the scheduled request expiry's). */
const SYSTEM_ACTOR: AuditActor = { id: 'system', email: 'system', ipAddress: '' };
/** The advisory lock of observability_events_maintain(): one maintenance at a time. */
const MAINTENANCE_LOCK = 7_311_982_411;

export interface PartitionMaintenance {
  /** Partitions created by this run. */
  created: number;
  /** Rows the default partition still holds: events outside today - drain days .. today + partitions_ahead. */
  stray: number;
}

/** The UTC calendar day of an instant, as YYYY-MM-DD. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Creates the partitions of today .. today + events.partitions_ahead (UTC) that are missing, and moves rows of the
 * default partition from within events.retention into partitions of their own: one call of
 * observability_events_maintain(), which takes an advisory lock (one run at a time) and, per new partition, short
 * locks on devices and then the table (as writers take them); a day whose locks are not free at once waits for the
 * next run, so maintenance never fails a writer.
 */
export async function maintainEventPartitions(
  db: Db,
  config: Config,
  now: Date = new Date(),
): Promise<PartitionMaintenance> {
  const [row] = await queryRows(
    db,
    sql`SELECT created, stray FROM observability_events_maintain(${utcDay(now)}::date,
      ${config.events.partitions_ahead}::int, ${Math.ceil(config.events.retention / DAY_MS)}::int)`,
    { created: col.number, stray: col.number },
  );
  return { created: Number(row?.created ?? 0), stray: Number(row?.stray ?? 0) };
}

/** listEventPartitions with each one's row count: a count(*) of every partition, for tests and benchmarks. */
export async function countEventPartitions(db: Db): Promise<Array<EventPartition & { rows: number }>> {
  const counted: Array<EventPartition & { rows: number }> = [];
  for (const partition of await listEventPartitions(db)) {
    const [row] = await queryRows(
      db,
      sql.raw(`SELECT count(*)::text AS n FROM ${quotedPartition(partition.name)}`),
      { n: col.text },
    );
    counted.push({ ...partition, rows: Number(row?.n ?? 0) });
  }
  return counted;
}

/** A partition name from the catalog, checked and quoted for a statement. */
function quotedPartition(name: string): string {
  if (!/^observability_events_(p\d{8}|default)$/.test(name))
    throw new Error(`not an event partition: ${name}`);
  return `"${name}"`;
}

export { type EventPartition, eventRetentionCutoff, listEventPartitions };

export interface DroppedPartition {
  name: string;
  from: string;
  to: string;
  rows: number;
}

/**
 * A day past the window that this run kept, and why: `locked` (its partition, or the table, stayed locked past the
 * lock timeout: a write in progress), `unfolded` (events the rollups do not count yet), `unarchived` (an hour holds
 * other than its archived manifest's count: marked for the archive to write again). The next run tries again.
 */
export interface KeptPartition {
  name: string;
  reason: 'locked' | 'unfolded' | 'unarchived' | 'undelivered';
  /** For `unarchived`: the hours whose stored count differs from the archive's. */
  hours?: string[];
}

export interface RetentionRun {
  dropped: DroppedPartition[];
  kept: KeptPartition[];
  rollupRowsDeleted: number;
}

export interface RetentionOptions {
  /** How long a drop waits for a lock (the partition's, then the table's) before it keeps the day for the next run. */
  lockTimeoutMs?: number;
}

/** The lock wait of a drop: writes in progress finish well within it; ingest waits at most this long for a drop. */
export const RETENTION_LOCK_TIMEOUT_MS = 5_000;

const DAILY_PARTITION = /^observability_events_p\d{8}$/;

/** Whether some event of the partition is not in the rollups yet (unfoldedSql, shared/observability/rollups/rollups.ts). */
async function hasUnfoldedEvents(db: Db, partition: string): Promise<boolean> {
  const [row] = await queryRows(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM ${sql.raw(quotedPartition(partition))} e WHERE ${unfoldedSql('e')}) AS unfolded`,
    { unfolded: col.bool },
  );
  return row?.unfolded === true;
}

/** Whether some enabled export destination has not received every event of the partition (docs/exports.md). */
async function hasUndeliveredEvents(db: Db, partition: string): Promise<boolean> {
  const [row] = await queryRows(
    db,
    sql`SELECT ${undeliveredIn(sql.raw(quotedPartition(partition)))} AS undelivered`,
    { undelivered: col.bool },
  );
  return row?.undelivered === true;
}

/**
 * The partition's rows, and the hours whose stored count is not the row count of their archived manifest
 * (observability_archive_hours.manifest, written with the hour's objects). Rows are only ever added to a day, and an
 * hour's manifest lists rows it read from that day, so equal counts mean the archive holds every row of the hour.
 */
async function countAgainstArchive(
  db: Db,
  partition: EventPartition,
): Promise<{ rows: number; unarchived: string[] }> {
  const from = new Date(partition.from!);
  const to = new Date(partition.to!);
  const counted = await queryRows(
    db,
    sql`WITH s AS (
        SELECT (floor(extract(epoch FROM event_time) / 3600) * 3600000)::bigint AS ms, count(*) AS n
        FROM ${sql.raw(quotedPartition(partition.name))} GROUP BY 1)
      SELECT s.ms::text AS ms, s.n::text AS stored, (a.manifest->>'rows') AS archived
      FROM s LEFT JOIN observability_archive_hours a
        ON a.hour = timestamptz 'epoch' + s.ms * interval '1 millisecond'
        AND a.hour >= ${tsParam(from)} AND a.hour < ${tsParam(to)}`,
    { ms: col.text, stored: col.text, archived: col.nullable(col.text) },
  );
  return {
    rows: counted.reduce((n, c) => n + Number(c.stored), 0),
    unarchived: counted
      .filter((c) => c.archived === null || Number(c.archived) !== Number(c.stored))
      .map((c) => new Date(Number(c.ms)).toISOString()),
  };
}

/** A lock not granted within lock_timeout, or a deadlock the database broke by failing this transaction. */
const isLockFailure = (err: unknown): boolean => ['55P03', '40P01'].includes(sqlState(err) ?? '');

/**
 * Drops one day past the window, or says why it is kept. One transaction: it locks the partition against writes
 * (SHARE: reads go on; a write in progress is waited for, within the lock timeout), then, with nothing able to change
 * the day, recounts it, checks the fold and, with an archive, each hour against its archived manifest, and only then
 * detaches and drops it, with its audit record. A write that committed while the drop waited is therefore counted:
 * the day stays until the archive holds it too.
 */
async function dropExpiredPartition(
  db: Db,
  config: Config,
  partition: EventPartition,
  lockTimeoutMs: number,
): Promise<DroppedPartition | KeptPartition> {
  const name = quotedPartition(partition.name);
  try {
    return await db.transaction(async (tx): Promise<DroppedPartition | KeptPartition> => {
      await tx.execute(sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`);
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${MAINTENANCE_LOCK}::bigint)`);
      await tx.execute(sql.raw(`LOCK TABLE ${name} IN SHARE MODE`));
      const { rows, unarchived } = await countAgainstArchive(tx, partition);
      if (config.events.archive.target !== 'none' && unarchived.length > 0) {
        // Folded counts below any real one: the archive takes these hours as late and writes them again, whole.
        await tx.execute(sql`UPDATE observability_archive_hours SET folded_calls = -1
          WHERE hour IN (SELECT jsonb_array_elements_text(${jsonParam(unarchived)})::timestamptz)`);
        return { name: partition.name, reason: 'unarchived', hours: unarchived };
      }
      if (await hasUnfoldedEvents(tx, partition.name)) return { name: partition.name, reason: 'unfolded' };
      if (await hasUndeliveredEvents(tx, partition.name))
        return { name: partition.name, reason: 'undelivered' };
      // Detach and drop take the table's owner: the owner's function does both, checking the name
      // (migrations/0034_service_role.sql).
      await tx.execute(sql`SELECT observability_events_drop_partition(${partition.name})`);
      await recordAudit(tx, {
        actionType: 'events.partition_dropped',
        actor: SYSTEM_ACTOR,
        resourceType: 'observability_events',
        resourceId: partition.name,
        metadata: {
          from: partition.from,
          to: partition.to,
          rows,
          retention_days: config.events.retention / DAY_MS,
        },
      });
      return { name: partition.name, from: partition.from!, to: partition.to!, rows };
    });
  } catch (err) {
    if (isLockFailure(err)) return { name: partition.name, reason: 'locked' };
    throw err;
  }
}

/**
 * Retention: drops every daily partition whose whole range ends at or before now - events.retention, each in its own
 * transaction with an `events.partition_dropped` audit record (its range and row count); a DROP TABLE, never a row
 * DELETE, so it costs the same at any size. The default partition is never dropped. Then deletes rollup and series
 * rows whose bucket starts before now - events.rollup_retention (those tables are small: about 3k rows a month).
 * A day past the window is kept while the rollup fold has not folded every event of it (a backlog: the summaries
 * would lose them), and, when events.archive is configured, until the archive holds all of it: checked first from
 * the archive's watermark and the fold's counts, then again under the partition's lock, row counts against the
 * archived manifests (dropExpiredPartition). A day whose partition stays locked past the lock timeout is kept.
 * A day is also kept while an enabled export destination has not received all of it (its cursor is behind one of
 * its events): a destination that stays down holds the day back, never loses it. Everything is checked again on every run. Run after a fold, so the events it drops are in the rollups (and late
 * events are seen by the archive check).
 */
export async function applyEventRetention(
  db: Db,
  config: Config,
  now: Date = new Date(),
  options: RetentionOptions = {},
): Promise<RetentionRun> {
  const cutoff = eventRetentionCutoff(config, now);
  const pastWindow = (await listEventPartitions(db)).filter(
    (p) =>
      p.to !== null &&
      p.from !== null &&
      Date.parse(p.to) <= cutoff.getTime() &&
      DAILY_PARTITION.test(p.name),
  );
  const dropped: DroppedPartition[] = [];
  const kept: KeptPartition[] = [];
  for (const p of pastWindow) {
    // Cheap checks first, without a lock: a day the fold or the archive has not finished waits for a later run.
    if (await hasUnfoldedEvents(db, p.name)) {
      kept.push({ name: p.name, reason: 'unfolded' });
      continue;
    }
    if (await hasUndeliveredEvents(db, p.name)) {
      kept.push({ name: p.name, reason: 'undelivered' });
      continue;
    }
    if (
      config.events.archive.target !== 'none' &&
      !(await isArchived(db, new Date(p.from!), new Date(p.to!)))
    ) {
      kept.push({ name: p.name, reason: 'unarchived' });
      continue;
    }
    const outcome = await dropExpiredPartition(
      db,
      config,
      p,
      options.lockTimeoutMs ?? RETENTION_LOCK_TIMEOUT_MS,
    );
    if ('reason' in outcome) kept.push(outcome);
    else dropped.push(outcome);
  }
  const rollupCutoff = new Date(now.getTime() - config.events.rollup_retention);
  const [deleted] = await queryRows(
    db,
    sql`WITH r AS (DELETE FROM observability_rollups WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1),
        s AS (DELETE FROM observability_series WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1),
        t AS (DELETE FROM observability_series_totals WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1)
      SELECT ((SELECT count(*) FROM r) + (SELECT count(*) FROM s) + (SELECT count(*) FROM t))::text AS n`,
    { n: col.text },
  );
  return { dropped, kept, rollupRowsDeleted: Number(deleted?.n ?? 0) };
}
