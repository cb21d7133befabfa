// The events table is partitioned by UTC day of event_time (migrations/0009_events_partitioned.sql). This is its
// scheduled maintenance: partitions are created ahead, so ingest always finds the day of a current event, and a day
// whose events landed in the default partition (an event far from now, sent before its day had a partition) gets
// its partition and its rows. Retention drops the partitions past events.retention whole, with an audit record
// each, and deletes rollup and series rows past events.rollup_retention. Design: docs/observability.md
// (Partitions, Retention).
import { sql } from 'drizzle-orm';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/query.ts';
import { tsParam } from '../db/sql-values.ts';
import { type AuditActor, recordAudit } from './audit.ts';
import { isArchived } from './event-archive-watermark.ts';
import { type EventPartition, listEventPartitions } from './event-partitions.ts';
import { eventRetentionCutoff } from './observability-ranges.ts';

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
 * observability_events_maintain(), which takes an advisory lock (one run at a time) and, per new partition, a short
 * exclusive lock on the table (ingest waits for it; a new partition is a catalog change).
 */
export async function maintainEventPartitions(
  db: Db,
  config: Config,
  now: Date = new Date(),
): Promise<PartitionMaintenance> {
  const [row] = await queryRows<{ created: number | string; stray: number | string }>(
    db,
    sql`SELECT created, stray FROM observability_events_maintain(${utcDay(now)}::date,
      ${config.events.partitions_ahead}::int, ${Math.ceil(config.events.retention / DAY_MS)}::int)`,
  );
  return { created: Number(row?.created ?? 0), stray: Number(row?.stray ?? 0) };
}

/** listEventPartitions with each one's row count: a count(*) of every partition, for tests and benchmarks. */
export async function countEventPartitions(db: Db): Promise<Array<EventPartition & { rows: number }>> {
  const counted: Array<EventPartition & { rows: number }> = [];
  for (const partition of await listEventPartitions(db)) {
    const [row] = await queryRows<{ n: string }>(
      db,
      sql.raw(`SELECT count(*)::text AS n FROM ${quotedPartition(partition.name)}`),
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

export interface RetentionRun {
  dropped: DroppedPartition[];
  rollupRowsDeleted: number;
}

const DAILY_PARTITION = /^observability_events_p\d{8}$/;

/**
 * Whether some event of the partition is not in the rollups yet: stored by a transaction at or after the fold's
 * watermark, or by one the fold passed while it was running (observability_fold_state, observability-rollups.ts).
 */
async function hasUnfoldedEvents(db: Db, partition: string): Promise<boolean> {
  const [row] = await queryRows<{ unfolded: boolean }>(
    db,
    sql`SELECT EXISTS (SELECT 1 FROM ${sql.raw(quotedPartition(partition))} e, observability_fold_state s
      WHERE e.ingest_xid >= s.next_xid OR e.ingest_xid = ANY (s.pending_xids)) AS unfolded`,
  );
  return row?.unfolded === true;
}

/**
 * Retention: drops every daily partition whose whole range ends at or before now - events.retention, each in its own
 * transaction with an `events.partition_dropped` audit record (its range and row count); a DROP TABLE, never a row
 * DELETE, so it costs the same at any size. The default partition is never dropped. Then deletes rollup and series
 * rows whose bucket starts before now - events.rollup_retention (those tables are small: about 3k rows a month).
 * A day past the window is kept while the rollup fold has not folded every event of it (a backlog: the summaries
 * would lose them), and, when events.archive is configured, until the archive holds all of it: its end is before the
 * archive's watermark and none of its hours got events after they were archived. Both are checked again on every run.
 * Run after a fold, so the events it drops are in the rollups (and late events are seen by the archive check).
 */
export async function applyEventRetention(
  db: Db,
  config: Config,
  now: Date = new Date(),
): Promise<RetentionRun> {
  const cutoff = eventRetentionCutoff(config, now);
  const pastWindow = (await listEventPartitions(db)).filter(
    (p) =>
      p.to !== null &&
      p.from !== null &&
      Date.parse(p.to) <= cutoff.getTime() &&
      DAILY_PARTITION.test(p.name),
  );
  // A day goes only once the rollups count every event of it, and, with an archive, once the archive holds every
  // event of it (shared/domain/event-archive.ts).
  const expired: EventPartition[] = [];
  for (const p of pastWindow) {
    if (await hasUnfoldedEvents(db, p.name)) continue;
    if (config.events.archive.target === 'none' || (await isArchived(db, new Date(p.from!), new Date(p.to!))))
      expired.push(p);
  }
  const dropped: DroppedPartition[] = [];
  for (const partition of expired) {
    const rows = await db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${MAINTENANCE_LOCK}::bigint)`);
      const [counted] = await queryRows<{ n: string }>(
        tx,
        sql.raw(`SELECT count(*)::text AS n FROM ${quotedPartition(partition.name)}`),
      );
      // Detach and drop take the table's owner: the owner's function does it, checking the name
      // (migrations/0031_service_role.sql).
      await tx.execute(sql`SELECT observability_events_drop_partition(${partition.name})`);
      const n = Number(counted?.n ?? 0);
      await recordAudit(tx, {
        actionType: 'events.partition_dropped',
        actor: SYSTEM_ACTOR,
        resourceType: 'observability_events',
        resourceId: partition.name,
        metadata: {
          from: partition.from,
          to: partition.to,
          rows: n,
          retention_days: config.events.retention / DAY_MS,
        },
      });
      return n;
    });
    dropped.push({ name: partition.name, from: partition.from!, to: partition.to!, rows });
  }
  const rollupCutoff = new Date(now.getTime() - config.events.rollup_retention);
  const [deleted] = await queryRows<{ n: string }>(
    db,
    sql`WITH r AS (DELETE FROM observability_rollups WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1),
        s AS (DELETE FROM observability_series WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1),
        t AS (DELETE FROM observability_series_totals WHERE bucket < ${tsParam(rollupCutoff)} RETURNING 1)
      SELECT ((SELECT count(*) FROM r) + (SELECT count(*) FROM s) + (SELECT count(*) FROM t))::text AS n`,
  );
  return { dropped, rollupRowsDeleted: Number(deleted?.n ?? 0) };
}
