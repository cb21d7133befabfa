// The agent's spool counters (events it could not deliver: dropped under the spool's size bound, torn by a crash,
// refused by this service), cumulative on the agent, kept on its device row as it last reported them with a batch,
// for the admin's device view. Written only when they changed, so a batch with the same counters costs one probe.
import { sql } from 'drizzle-orm';
import type { Db } from '../core/db/database.ts';
import { queryRows } from '../core/db/query.ts';
import { tsParam, uuidParam } from '../core/db/sql-values.ts';
import type { SpoolCounters } from './schemas.ts';

export async function recordSpoolCounters(db: Db, deviceId: string, counters: SpoolCounters, now: Date) {
  const values = sql`(${counters.dropped}::bigint, ${counters.torn}::bigint, ${counters.refused}::bigint)`;
  await queryRows(
    db,
    sql`UPDATE devices SET (spool_dropped, spool_torn, spool_refused) = ${values}, spool_reported_at = ${tsParam(now)}
      WHERE id = ${uuidParam(deviceId)} AND (spool_dropped, spool_torn, spool_refused) IS DISTINCT FROM ${values}
      RETURNING 1`,
  );
}
