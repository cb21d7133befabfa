// Where each streamed OCSF class (delivery/classes.ts) keeps its cursor, where a new destination's cursors start,
// what is after a cursor (its lag) and where a replay from a time moves it. Imports nothing that runs but SQL, so
// the functions that manage destinations stay small.
import { type SQL, sql } from 'drizzle-orm';
import { tsParam, uuidParam } from '../core/db/sql-values.ts';
import { ACCESS_ACTIVITIES } from './ocsf.ts';
import type { OcsfClassKey } from './ocsf-objects.ts';

/** The classes streamed apart from the tool calls, each from its own source. */
export const STREAMED_CLASSES = [
  'deviceInventory',
  'softwareInventory',
  'userAccess',
  'datastoreActivity',
  'detectionFinding',
] as const satisfies readonly OcsfClassKey[];
export type StreamedClass = (typeof STREAMED_CLASSES)[number];

/**
 * Whether destination `d` takes the class of its cursor `c` (export_class_cursors): only a security_lake that names a
 * custom source for it. Nothing is sent to the others, and their status says so.
 */
export const TAKES_CLASS = sql`d.kind = 'security_lake' AND d.settings->'sources'->>c.class_key IS NOT NULL`;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** `<xid>:<uuid>`, the position in a transaction-keyed source (inventories, usage events, alerts). */
export const xidPosition = (position: string): { xid: string; id: string } => {
  const at = position.indexOf(':');
  return { xid: position.slice(0, at), id: position.slice(at + 1) };
};

/**
 * A source keyed by (transaction, id), as alias `t`: its table, its position's transaction column, and the time of
 * the change the position stands for (the lag's age, and where a replay from a time starts).
 */
interface XidSource {
  table: SQL;
  xid: SQL;
  at: SQL;
}
const INVENTORIES: XidSource = {
  table: sql`devices`,
  xid: sql`t.inventory_xid`,
  at: sql`t.last_inventory_at`,
};
export const XID_SOURCES = {
  deviceInventory: INVENTORIES,
  softwareInventory: INVENTORIES,
  datastoreActivity: { table: sql`request_usage_events`, xid: sql`t.export_xid`, at: sql`t.timestamp` },
  detectionFinding: {
    table: sql`alerts`,
    xid: sql`t.change_xid`,
    at: sql`coalesce(t.acknowledged_at, t.first_seen_at)`,
  },
} as const satisfies Record<Exclude<StreamedClass, 'userAccess'>, XidSource>;

/** The records of `source` (alias `t`) after `position`, a row comparison the (xid, id) index starts its scan at. */
export function afterXidPosition(source: XidSource, position: string): SQL {
  const { xid, id } = xidPosition(position);
  return sql`${source.xid} IS NOT NULL AND (${source.xid}, t.id) > (${xid}::xid8, ${uuidParam(id)})`;
}

const XID_START = {
  oldest: sql`${`0:${NIL_UUID}`}::text`,
  now: sql`pg_snapshot_xmin(pg_current_snapshot())::text || ${`:${NIL_UUID}`}::text`,
};

/** Each class's position before every row (`oldest`) and after every row of a transaction finished by now. */
const START: Record<StreamedClass, Record<'now' | 'oldest', SQL>> = {
  deviceInventory: XID_START,
  softwareInventory: XID_START,
  datastoreActivity: XID_START,
  detectionFinding: XID_START,
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

/**
 * What of the class's source is after `position` (the status's lag): `n` records, the oldest changed `s` seconds
 * ago (null when none).
 */
export function classLagSql(key: StreamedClass, position: string): SQL {
  const age = (at: SQL) => sql`extract(epoch FROM now() - min(${at}))::float8 AS s`;
  if (key === 'userAccess') {
    return sql`SELECT count(*)::int AS n, ${age(sql`t.timestamp`)} FROM audit_logs t
      WHERE t.seq > ${position}::bigint AND t.action_type IN (${ACCESS_ACTIONS})`;
  }
  const source = XID_SOURCES[key];
  return sql`SELECT count(*)::int AS n, ${age(source.at)} FROM ${source.table} t
    WHERE ${afterXidPosition(source, position)}`;
}

/**
 * The position just before the first record of the class changed at or after `from` (`p`, none when there is
 * none), and whether it is behind `position` (`behind`): a replay moves the cursor only back. Records of the same
 * transaction changed before `from` are sent again with it (at least once), as the tool calls' replay does.
 */
export function classReplaySql(key: StreamedClass, position: string, from: Date): SQL {
  if (key === 'userAccess') {
    return sql`SELECT f.p, f.p::bigint < ${position}::bigint AS behind FROM (SELECT (t.seq - 1)::text AS p
      FROM audit_logs t WHERE t.timestamp >= ${tsParam(from)} AND t.action_type IN (${ACCESS_ACTIONS})
      ORDER BY t.seq LIMIT 1) f`;
  }
  const source = XID_SOURCES[key];
  const asRow = (p: SQL) => sql`(split_part(${p}, ':', 1)::xid8, split_part(${p}, ':', 2)::uuid)`;
  return sql`SELECT f.p, ${asRow(sql`f.p`)} < ${asRow(sql`${position}::text`)} AS behind
    FROM (SELECT ${source.xid}::text || ${`:${NIL_UUID}`}::text AS p FROM ${source.table} t
      WHERE ${source.xid} IS NOT NULL AND ${source.at} >= ${tsParam(from)} ORDER BY ${source.xid} LIMIT 1) f`;
}
