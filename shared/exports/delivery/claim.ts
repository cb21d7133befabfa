// The claim that starts each stream's part of a delivery pass, shared by the tool calls' cursors (export_cursors)
// and the class streams' (export_class_cursors): a due cursor of an enabled destination has its next attempt moved
// past the pass (the lease), so an overlapping pass leaves it alone; one that ended without a failure is due again.
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { queryRows, type RowOf, type RowShape } from '../../core/db/query.ts';

/** The cursors of one table to claim: `c` is the cursor, `d` its destination. */
export interface Claim<S extends RowShape> {
  table: 'export_cursors' | 'export_class_cursors';
  /** Which cursors the pass serves, beyond due and enabled. */
  where: SQL;
  /** More to set on each cursor claimed. */
  set?: SQL;
  returning: SQL;
  shape: S;
}

/** Claims the due cursors `claim` names, for as long as a pass (its time budget and a send's timeout either side). */
export function claimDue<S extends RowShape>(db: Db, config: Config, claim: Claim<S>): Promise<RowOf<S>[]> {
  const { time_budget, timeout } = config.exports;
  const lease = (time_budget + 2 * timeout) / 1000;
  return queryRows(
    db,
    sql`UPDATE ${sql.raw(claim.table)} c SET next_attempt_at = now() + make_interval(secs => ${lease}::float8)
        ${claim.set ? sql`, ${claim.set}` : sql``}
      FROM export_destinations d
      WHERE d.id = c.destination_id AND d.enabled AND ${claim.where} AND c.next_attempt_at <= now()
      RETURNING ${claim.returning}`,
    claim.shape,
  );
}

/** Makes a cursor that ended its pass without a failure (`where` names it) due again at the next pass. */
export async function dueAgain(db: Db, table: Claim<RowShape>['table'], where: SQL): Promise<void> {
  await db.execute(sql`UPDATE ${sql.raw(table)} SET next_attempt_at = now() WHERE ${where} AND attempts = 0`);
}
