// The partitions of the events table as the catalog lists them. A module of its own, importing no table, so that the
// event archive, which reads the oldest partition, does not load the audit log's tables with retention's maintenance.
import { sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows } from '../../core/db/query.ts';

export interface EventPartition {
  name: string;
  /** First instant of its range, or null for the default partition. */
  from: string | null;
  /** End of its range (exclusive), or null for the default partition. */
  to: string | null;
}

/** The partitions of the events table from the catalog, oldest first (the default last); reads no row. */
export async function listEventPartitions(db: Db): Promise<EventPartition[]> {
  const rows = await queryRows(
    db,
    sql`SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'observability_events'::regclass`,
    { name: col.text, bound: col.text },
  );
  return rows
    .map((r) => {
      const from = /FROM \('([^']+)'\)/.exec(r.bound)?.[1];
      const to = /TO \('([^']+)'\)/.exec(r.bound)?.[1];
      return {
        name: r.name,
        from: from ? new Date(from).toISOString() : null,
        to: to ? new Date(to).toISOString() : null,
      };
    })
    .sort((a, b) => (a.from === null ? 1 : b.from === null ? -1 : a.from.localeCompare(b.from)));
}
