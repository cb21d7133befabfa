// Where each streamed OCSF class (delivery/classes.ts) keeps its cursor, and where a new destination's cursors
// start. Imports nothing that runs but SQL, so the functions that manage destinations stay small.
import { type SQL, sql } from 'drizzle-orm';
import { uuidParam } from '../core/db/sql-values.ts';
import { ACCESS_ACTIVITIES } from './ocsf.ts';
import type { OcsfClassKey } from './ocsf-objects.ts';

/** The classes streamed apart from the tool calls, each from its own source. */
export const STREAMED_CLASSES = [
  'deviceInventory',
  'softwareInventory',
  'userAccess',
  'datastoreActivity',
] as const satisfies readonly OcsfClassKey[];
export type StreamedClass = (typeof STREAMED_CLASSES)[number];

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** `<xid>:<uuid>`, the position in a transaction-keyed source (inventories, usage events). */
export const xidPosition = (position: string): { xid: string; id: string } => {
  const at = position.indexOf(':');
  return { xid: position.slice(0, at), id: position.slice(at + 1) };
};

const XID_START = {
  oldest: sql`${`0:${NIL_UUID}`}::text`,
  now: sql`pg_snapshot_xmin(pg_current_snapshot())::text || ${`:${NIL_UUID}`}::text`,
};

/** Each class's position before every row (`oldest`) and after every row of a transaction finished by now. */
const START: Record<StreamedClass, Record<'now' | 'oldest', SQL>> = {
  deviceInventory: XID_START,
  softwareInventory: XID_START,
  datastoreActivity: XID_START,
  // The audit log's seq: an insert still running holds the chain's lock and has a seq above every committed one.
  userAccess: { oldest: sql`'0'::text`, now: sql`(SELECT coalesce(max(seq), 0) FROM audit_logs)::text` },
};

/** The cursors of a new destination, one per streamed class; run in the transaction that makes it. */
export function insertClassCursors(destinationId: string, start: 'now' | 'oldest'): SQL {
  const values = STREAMED_CLASSES.map(
    (key) => sql`(${uuidParam(destinationId)}, ${key}, ${START[key][start]})`,
  );
  return sql`INSERT INTO export_class_cursors (destination_id, class_key, position)
    VALUES ${sql.join(values, sql`, `)}`;
}

/** The audit actions the access stream sends, as an SQL list. */
const ACCESS_ACTIONS = sql.join(
  Object.keys(ACCESS_ACTIVITIES).map((a) => sql`${a}`),
  sql`, `,
);

/** How many records of the class's source are after `position` (the status's lag). */
export function classLagSql(key: StreamedClass, position: string): SQL {
  if (key === 'userAccess') {
    return sql`SELECT count(*)::int AS n FROM audit_logs
      WHERE seq > ${position}::bigint AND action_type IN (${ACCESS_ACTIONS})`;
  }
  const { xid, id } = xidPosition(position);
  const after = (x: SQL, i: SQL) => sql`(${x}, ${i}) > (${xid}::xid8, ${uuidParam(id)})`;
  return key === 'datastoreActivity'
    ? sql`SELECT count(*)::int AS n FROM request_usage_events u WHERE ${after(sql`u.export_xid`, sql`u.id`)}`
    : sql`SELECT count(*)::int AS n FROM devices d
        WHERE d.inventory_xid IS NOT NULL AND ${after(sql`d.inventory_xid`, sql`d.id`)}`;
}
