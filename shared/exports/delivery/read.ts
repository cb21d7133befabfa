// The events after a destination's cursor, in (ingest_xid, id) order, as the mapping takes them. Only events of
// transactions older than every one still running are read (ingest_xid below the snapshot's xmin): an event of a
// transaction that commits later can then never land behind the cursor, however ingest interleaves.
// The columns are read as stored and shaped here: building each row as JSON on the server (json_build_object,
// to_char) cost the database several times the read itself.
import { sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows, type RowOf } from '../../core/db/query.ts';
import { eventResult, eventType } from '../../observability/schemas.ts';
import { afterPosition } from '../positions.ts';
import type { ExportSource, StoredEvent } from '../source.ts';

/** A position in the events: every event at or before it has been delivered. */
export interface ExportCursor {
  xid: string;
  id: string;
}

/** Metadata larger than this is left out of an export (metadata_omitted), so that a batch stays a few megabytes. */
const EXPORT_METADATA_MAX_BYTES = 16 * 1024;

/** The keyset condition "after `cursor`" on the events aliased `e`. */
export const afterCursor = (cursor: ExportCursor) =>
  afterPosition(sql`${cursor.xid}::xid8`, sql`${cursor.id}::bigint`);

/** Visible to every later reader: committed before any transaction still running began. */
export const SETTLED = sql`e.ingest_xid < pg_snapshot_xmin(pg_current_snapshot())`;

/** A timestamptz as whole microseconds since the epoch (exact in a float8 for any date events carry). */
const micros = (column: string) => sql.raw(`(date_part('epoch', e.${column}) * 1000000)::int8`);

/** Every field the mapping reads; exports never carry the prompt. */
const EVENT_COLUMNS = sql`e.ingest_xid::text AS x, e.id::text AS id, e.event_id::text AS event_id,
  e.device_id::text AS device_id, e.serial_number, e.source_ip, ${micros('received_at')} AS received_us,
  ${micros('event_time')} AS event_us, e.agent_type, e.mcp_name, e.tool, e.event_type, e.result, e.deny_code,
  e.rule_applied, e.model, e.session_id, e.group_name, e.actor_email, e.tokens_in, e.tokens_out, e.duration_ms,
  e.prompt_truncated, e.deny_reason, e.error_message, e.skills, e.metadata::text AS metadata`;

const text = col.nullable(col.text);
const EVENT_ROW = {
  x: col.text,
  id: col.text,
  event_id: text,
  device_id: col.text,
  serial_number: col.text,
  source_ip: text,
  received_us: col.number,
  event_us: col.number,
  agent_type: col.text,
  mcp_name: col.text,
  tool: col.text,
  event_type: col.oneOf(eventType.options),
  result: col.oneOf(eventResult.options),
  deny_code: text,
  rule_applied: text,
  model: text,
  session_id: text,
  group_name: text,
  actor_email: text,
  tokens_in: col.number,
  tokens_out: col.number,
  duration_ms: col.number,
  prompt_truncated: col.bool,
  deny_reason: text,
  error_message: text,
  skills: col.json<string[]>(),
  metadata: col.text,
} as const;

/** Microseconds since the epoch as the API keeps an instant: whole milliseconds. */
const msOf = (us: number): number => Math.floor(us / 1000);

/** Microseconds since the epoch as the API prints an instant (milliseconds, UTC). */
const isoOf = (us: number): string => new Date(msOf(us)).toISOString();

/** A row as GET …/observability/events/{id} returns the event, its prompt left out. */
function storedEvent(r: RowOf<typeof EVENT_ROW>): StoredEvent {
  // The metadata's text is its size as the API counts it; it is parsed only when it is exported.
  const omitted = Buffer.byteLength(r.metadata) > EXPORT_METADATA_MAX_BYTES;
  return {
    id: r.id,
    event_id: r.event_id,
    device_id: r.device_id,
    serial_number: r.serial_number,
    source_ip: r.source_ip,
    received_at: isoOf(r.received_us),
    event_time: isoOf(r.event_us),
    agent_type: r.agent_type,
    mcp_name: r.mcp_name,
    tool: r.tool,
    event_type: r.event_type,
    result: r.result,
    deny_code: r.deny_code,
    rule_applied: r.rule_applied,
    model: r.model,
    session_id: r.session_id,
    group: r.group_name,
    actor_email: r.actor_email,
    tokens_in: r.tokens_in,
    tokens_out: r.tokens_out,
    duration_ms: r.duration_ms,
    prompt_truncated: r.prompt_truncated,
    deny_reason: r.deny_reason,
    error_message: r.error_message,
    skills: r.skills,
    prompt: null,
    metadata: omitted ? null : (JSON.parse(r.metadata) as Record<string, unknown>),
    metadata_omitted: omitted,
  };
}

export interface Batch {
  sources: ExportSource[];
  /** The position after the batch's last event (the cursor once it is delivered); absent when empty. */
  last?: ExportCursor;
}

/**
 * "After `cursor`" as the batch read plans it: the cursor's values as sub-selects, which the planner cannot see, so
 * that it weighs the rows after the cursor as a share of the table instead of estimating them from statistics. Its
 * estimate from the values counts events newer than its statistics as none (all of a large transaction's, or a
 * backlog's), and it would sort every event after the cursor for each batch; this way it walks each partition's
 * (ingest_xid, id) index in order and stops at the limit, in one statement.
 */
const afterCursorUnseen = (cursor: ExportCursor) =>
  afterPosition(sql`(SELECT ${cursor.xid}::xid8)`, sql`(SELECT ${cursor.id}::bigint)`);

/** At most `limit` settled events after `cursor`. */
export async function readBatch(db: Db, cursor: ExportCursor, limit: number): Promise<Batch> {
  const rows = await queryRows(
    db,
    sql`SELECT ${EVENT_COLUMNS} FROM observability_events e WHERE ${afterCursorUnseen(cursor)} AND ${SETTLED}
      ORDER BY e.ingest_xid, e.id LIMIT ${limit}::int`,
    EVENT_ROW,
  );
  const sources = rows.map((r) => ({ event: storedEvent(r), event_ms: msOf(r.event_us) }));
  const end = rows.at(-1);
  return end ? { sources, last: { xid: end.x, id: end.id } } : { sources };
}
