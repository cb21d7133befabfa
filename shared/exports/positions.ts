// Positions in the stored events as the exports walk them, (ingest_xid, id), and what retention asks of them: a day
// is dropped only once every enabled destination has every event of it. Imports nothing that runs but SQL, so the
// maintenance function's bundle stays small.
import { type SQL, sql } from 'drizzle-orm';

/** "Event `e` is after position (xid, id)": the keyset condition, on the ingest_xid index. */
export const afterPosition = (xid: SQL, id: SQL): SQL =>
  sql`e.ingest_xid >= ${xid} AND (e.ingest_xid > ${xid} OR e.id > ${id})`;

/** Whether the events table `from` (a partition) holds an event some enabled destination has not received. */
export const undeliveredIn = (from: SQL): SQL =>
  sql`EXISTS (SELECT 1 FROM export_destinations d JOIN export_cursors c ON c.destination_id = d.id
    WHERE d.enabled AND EXISTS (SELECT 1 FROM ${from} e
      WHERE ${afterPosition(sql`c.cursor_xid`, sql`c.cursor_id`)}))`;
