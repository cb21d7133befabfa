// Positions in the stored events as the exports walk them, (ingest_xid, id), and what retention asks of them: a day
// is dropped only once every enabled destination has every event of it. Imports nothing that runs but SQL, so the
// maintenance function's bundle stays small.
import { type SQL, sql } from 'drizzle-orm';

/**
 * "Event `e` is after position (xid, id)": the keyset condition as a row comparison, which PostgreSQL takes whole as
 * the start of a scan of the (ingest_xid, id) index, so a read after the cursor never walks the rows before it.
 */
export const afterPosition = (xid: SQL, id: SQL): SQL => sql`(e.ingest_xid, e.id) > (${xid}, ${id})`;

/** Whether the events table `from` (a partition) holds an event some enabled destination has not received. */
export const undeliveredIn = (from: SQL): SQL =>
  sql`EXISTS (SELECT 1 FROM export_destinations d JOIN export_cursors c ON c.destination_id = d.id
    WHERE d.enabled AND EXISTS (SELECT 1 FROM ${from} e
      WHERE ${afterPosition(sql`c.cursor_xid`, sql`c.cursor_id`)}))`;
