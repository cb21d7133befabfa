// The events after a destination's cursor, in (ingest_xid, id) order, as the mapping takes them. Only events of
// transactions older than every one still running are read (ingest_xid below the snapshot's xmin): an event of a
// transaction that commits later can then never land behind the cursor, however ingest interleaves.
import { sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows } from '../../core/db/query.ts';
import { iso } from '../../observability/cursor.ts';
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

/** One event as JSON text, every field the mapping reads; exports never carry the prompt. */
const EVENT_JSON = sql`json_build_object('id', e.id::text, 'event_id', e.event_id::text,
  'device_id', e.device_id::text, 'serial_number', e.serial_number, 'source_ip', e.source_ip,
  'received_at', ${iso(sql`e.received_at`)}, 'event_time', ${iso(sql`e.event_time`)}, 'agent_type', e.agent_type,
  'mcp_name', e.mcp_name, 'tool', e.tool, 'event_type', e.event_type, 'result', e.result,
  'deny_code', e.deny_code, 'rule_applied', e.rule_applied, 'model', e.model, 'session_id', e.session_id,
  'group', e.group_name, 'actor_email', e.actor_email, 'tokens_in', e.tokens_in, 'tokens_out', e.tokens_out,
  'duration_ms', e.duration_ms, 'prompt_truncated', e.prompt_truncated, 'deny_reason', e.deny_reason,
  'error_message', e.error_message, 'skills', e.skills, 'prompt', NULL,
  'metadata', CASE WHEN octet_length(e.metadata::text) <= ${EXPORT_METADATA_MAX_BYTES} THEN e.metadata END,
  'metadata_omitted', octet_length(e.metadata::text) > ${EXPORT_METADATA_MAX_BYTES})::text`;

export interface Batch {
  sources: ExportSource[];
  /** The position after the batch's last event (the cursor once it is delivered); absent when empty. */
  last?: ExportCursor;
}

/** At most `limit` settled events after `cursor`. */
export async function readBatch(db: Db, cursor: ExportCursor, limit: number): Promise<Batch> {
  const rows = await db.transaction(async (tx) => {
    // The planner estimates the row comparison by ingest_xid alone, and events newer than its statistics as none:
    // it would sort every event after the cursor (all of a large transaction's, or a backlog's) for each batch.
    // Without sorts it walks each partition's (ingest_xid, id) index in order and stops at the limit.
    await tx.execute(sql`SET LOCAL enable_sort = off`);
    return queryRows(
      tx,
      sql`SELECT e.ingest_xid::text AS x, e.id::text AS id, ${EVENT_JSON} AS j FROM observability_events e
        WHERE ${afterCursor(cursor)} AND ${SETTLED}
        ORDER BY e.ingest_xid, e.id LIMIT ${limit}::int`,
      { x: col.text, id: col.text, j: col.text },
    );
  });
  const sources = rows.map((r) => ({ event: JSON.parse(r.j) as StoredEvent }));
  const end = rows.at(-1);
  return end ? { sources, last: { xid: end.x, id: end.id } } : { sources };
}
