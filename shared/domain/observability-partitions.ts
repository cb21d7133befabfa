// The events table is partitioned by UTC day of event_time (migrations/0009_events_partitioned.sql). This is its
// scheduled maintenance: partitions are created ahead, so ingest always finds the day of a current event, and a day
// whose events landed in the default partition (an event far from now, sent before its day had a partition) gets
// its partition and its rows. Design: README, Admin observability (Partitions).
import { sql } from 'drizzle-orm';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/query.ts';

/** Days back from today within which rows of the default partition get their own day's partition. */
export const DEFAULT_PARTITION_DRAIN_DAYS = 90;

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
 * default partition from the last DEFAULT_PARTITION_DRAIN_DAYS days into partitions of their own: one call of
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
      ${config.events.partitions_ahead}::int, ${DEFAULT_PARTITION_DRAIN_DAYS}::int)`,
  );
  return { created: Number(row?.created ?? 0), stray: Number(row?.stray ?? 0) };
}

export interface EventPartition {
  name: string;
  /** First instant of its range, or null for the default partition. */
  from: string | null;
  rows: number;
}

/** The partitions of the events table, oldest first (the default last), with their row counts (tests, benchmarks). */
export async function listEventPartitions(db: Db): Promise<EventPartition[]> {
  const rows = await queryRows<{ name: string; bound: string; rows: number | string }>(
    db,
    sql`SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound,
        (SELECT count(*) FROM observability_events e WHERE e.tableoid = c.oid) AS rows
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'observability_events'::regclass ORDER BY c.relname`,
  );
  return rows
    .map((r) => {
      const from = /FROM \('([^']+)'\)/.exec(r.bound)?.[1];
      return { name: r.name, from: from ? new Date(from).toISOString() : null, rows: Number(r.rows) };
    })
    .sort((a, b) => (a.from === null ? 1 : b.from === null ? -1 : a.from.localeCompare(b.from)));
}
