// Admin observability: the MCP tool-call event browser (the list, one event, a session's calls).
// Figures: `npm run bench:observability` (test/bench/observability.ts), recorded in docs/benchmarks.md.
//
// * Event browser: keyset on (event_time DESC, id DESC) — id is the unique tie-break — with composite indexes
//   (x, event_time DESC, id DESC) for device, MCP + tool, agent, actor, session, deny code, a partial index for
//   denied / error and one for events carrying text (free-text filter), so a page is one index range scan of
//   limit + 1 matching rows at any depth (all DESC NULLS LAST, the order the queries ask for: an index with the
//   other NULLS order cannot serve it). serial is resolved to device ids. The first page pins the newest id handed out
//   into the cursor (a snapshot): events arriving while someone pages never shift or repeat rows. Cursors are opaque
//   base64url, checksummed, bound to the list and its filters (shared/observability/cursor.ts).
// * Daily partitions (shared/observability/partitions/maintenance.ts): a page's index scans run in every partition its range keeps, so
//   a page of a filter that walks the time index reads the newest day first (newestFirst, below).
// * Response size: shared/observability/bounds.ts (rows and bytes per page, shortened text in list views, 64 KB rows).
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { tsParam } from '../../core/db/sql-values.ts';
import { notFound } from '../../core/errors.ts';
import {
  type Bounded,
  boundedArray,
  PAGE_BYTES,
  pageOf,
  queryDoc,
  SKILL_PREVIEW_CHARS,
  SKILLS_PREVIEW,
  TEXT_PREVIEW_CHARS,
} from '../bounds.ts';
import { and, eventConditions, lit } from '../conditions.ts';
import { cursorKey, decodeCursor, encodeCursor, filterHash, ID_RE, iso, isoUs, TS_RE } from '../cursor.ts';
import { droppedWithin, retentionNotice } from '../ranges.ts';
import type { ListEventsQuery, SessionQuery } from '../schemas.ts';

const METADATA_MAX_BYTES = 256 * 1024;

/** Skills as a list view shows them: at most SKILLS_PREVIEW names of at most SKILL_PREVIEW_CHARS characters. */
const SKILLS_SHORT =
  sql.raw(`(SELECT coalesce(json_agg(left(x.s, ${SKILL_PREVIEW_CHARS}) ORDER BY x.o), '[]'::json)
  FROM jsonb_array_elements_text(e.skills) WITH ORDINALITY AS x(s, o) WHERE x.o <= ${SKILLS_PREVIEW})`);
const SKILLS_LONG = sql.raw(`(jsonb_array_length(e.skills) > ${SKILLS_PREVIEW}
  OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.skills) AS x(s) WHERE length(x.s) > ${SKILL_PREVIEW_CHARS}))`);
const textLong = (col: string) => sql.raw(`length(e.${col}) > ${TEXT_PREVIEW_CHARS}`);

/**
 * An event as JSON. The detail (`full`) carries everything as stored (metadata up to 256 KiB); a list view carries
 * deny_reason and error_message cut to TEXT_PREVIEW_CHARS characters, at most SKILLS_PREVIEW skills, a prompt
 * preview, no metadata, and `truncated`: the names of the fields it shortened.
 */
const eventJson = (full: boolean): SQL => {
  const common = sql`'id', e.id::text, 'event_id', e.event_id::text,
  'device_id', e.device_id::text, 'serial_number', e.serial_number, 'source_ip', e.source_ip,
  'received_at', ${iso(sql`e.received_at`)}, 'event_time', ${iso(sql`e.event_time`)}, 'agent_type', e.agent_type,
  'mcp_name', e.mcp_name, 'tool', e.tool, 'event_type', e.event_type, 'result', e.result,
  'deny_code', e.deny_code, 'rule_applied', e.rule_applied, 'model', e.model, 'session_id', e.session_id,
  'group', e.group_name, 'actor_email', e.actor_email, 'tokens_in', e.tokens_in, 'tokens_out', e.tokens_out,
  'duration_ms', e.duration_ms, 'prompt_truncated', e.prompt_truncated`;
  if (full) {
    return sql`json_build_object(${common}, 'deny_reason', e.deny_reason, 'error_message', e.error_message,
      'skills', e.skills, 'prompt', e.prompt,
      'metadata', CASE WHEN octet_length(e.metadata::text) <= ${METADATA_MAX_BYTES} THEN e.metadata END,
      'metadata_omitted', octet_length(e.metadata::text) > ${METADATA_MAX_BYTES})`;
  }
  const n = sql.raw(String(TEXT_PREVIEW_CHARS));
  return sql`json_build_object(${common}, 'deny_reason', left(e.deny_reason, ${n}),
    'error_message', left(e.error_message, ${n}),
    'skills', CASE WHEN ${SKILLS_LONG} THEN ${SKILLS_SHORT} ELSE e.skills::json END,
    'prompt_preview', left(e.prompt, ${n}),
    'truncated', to_json(array_remove(ARRAY[CASE WHEN ${textLong('deny_reason')} THEN 'deny_reason' END,
      CASE WHEN ${textLong('error_message')} THEN 'error_message' END,
      CASE WHEN ${SKILLS_LONG} THEN 'skills' END], NULL)))`;
};

type EventRow = { k: string; id: string; e: unknown };

/** A page of events `e` (already filtered, ordered and limited) as a bounded array of {k, id, e}. */
const eventPage = (rows: SQL, order: 'ASC' | 'DESC'): SQL =>
  boundedArray(
    sql`SELECT json_build_object('k', ${isoUs(sql`e.event_time`)}, 'id', e.id::text, 'e', ${eventJson(false)}) AS o,
      row_number() OVER (ORDER BY e.event_time ${sql.raw(order)}, e.id ${sql.raw(order)}) AS rn FROM (${rows}) e`,
    PAGE_BYTES,
  );

/** The window a page reads first: the day before its newest possible event (and anything later). */
const FIRST_WINDOW_MS = 86_400_000;

/**
 * Whether a page reads its newest day first (newestFirst) rather than the whole table at once. Filters on a device, a
 * session or the text have an index of their own in every partition that leads with them, where each partition's
 * first match is one short descent; the whole table is cheaper to plan and the planner keeps its ordered walks (read
 * newest day first, the older window's time condition turned the planner from the text index). The other filters walk each partition's time index to its first match,
 * which can be thousands of rows in. So does a serial: it is resolved to its devices in the statement, and the
 * planner, counting the confirming `serial_number` condition as independent of the device, expects about one row
 * per partition and reads every event of the device instead of walking in order.
 */
const readsNewestDayFirst = (query: ListEventsQuery): boolean =>
  query.device_id === undefined && query.session_id === undefined && query.q === undefined;

/**
 * The first `n` events matching `where`, newest first (event_time DESC, id DESC): with `newest`, the day before it
 * (and anything later) first, then, only when that day holds fewer than `n` rows, everything older. The two windows
 * split the time line, so the rows are the same as one ORDER BY .. LIMIT over the table; the difference is the plan.
 * On the daily partitions, one ORDER BY .. LIMIT is a Merge Append that starts an index scan in every partition, each
 * walking to its first match, before it returns a row. The first window prunes every partition but the newest day's, and the second is gated by a
 * one-time filter on the first's row count, so a page the newest day fills never touches an older partition
 * (bench:observability, event pages).
 */
function newestFirst(where: SQL[], n: number, newest?: Date): SQL {
  const order = sql`ORDER BY e.event_time DESC NULLS LAST, e.id DESC NULLS LAST LIMIT ${n}`;
  if (!newest) return sql`SELECT * FROM observability_events e WHERE ${and(where)} ${order}`;
  const since = tsParam(new Date(newest.getTime() - FIRST_WINDOW_MS));
  return sql`WITH day AS MATERIALIZED (SELECT * FROM observability_events e
      WHERE ${and([...where, sql`e.event_time >= ${since}`])} ${order}),
    older AS MATERIALIZED (SELECT * FROM observability_events e
      WHERE ${and([...where, sql`e.event_time < ${since}`, sql`(SELECT count(*) FROM day) < ${n}`])} ${order})
    SELECT * FROM (SELECT * FROM day UNION ALL SELECT * FROM older) e ${order}`;
}

/** Events newest first, filtered, keyset-paginated on (event_time, id) with a snapshot of the newest id. */
export async function listEvents(db: Db, config: Pick<Config, 'auth' | 'events'>, query: ListEventsQuery) {
  const fh = filterHash(query);
  const where = eventConditions(query);
  if (query.from) where.push(sql`e.event_time >= ${query.from}::timestamptz`);
  if (query.to) where.push(sql`e.event_time < ${query.to}::timestamptz`);
  // The snapshot: the newest id handed out when the first page was read (the identity sequence's last value: every row
  // the statement sees has an id at or below it; cheaper than max(id), which plans an index scan in every partition).
  // Later pages leave out rows with larger ids (events that arrived since); the first page needs no such condition.
  let snapshot: SQL = sql`(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM observability_events_id_seq)`;
  // Where the page's newest event can be: before the cursor, before `to`, else about now (later events are read too).
  let newest: Date | undefined;
  if (readsNewestDayFirst(query)) newest = query.to ? new Date(query.to) : new Date();
  if (query.cursor) {
    const [t, id, snap] = decodeCursor(cursorKey(config), query.cursor, 'events', fh, [TS_RE, ID_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) < (${t}::timestamptz, ${id}::bigint)`);
    // Implied by the row comparison, which partition pruning does not read: stated, the partitions newer than the
    // cursor are left out when the statement is planned, not walked.
    where.push(sql`e.event_time <= ${t}::timestamptz`);
    where.push(sql`e.id <= ${snap}::bigint`);
    snapshot = sql`${snap}::bigint`;
    if (t && newest) newest = new Date(t);
  }
  const doc = await queryDoc<{ snap: string; dropped: boolean; page: Bounded<EventRow> }>(
    db,
    sql`SELECT json_build_object('snap', ${snapshot}::text,
      'dropped', ${droppedWithin(
        query.from ? sql`${query.from}::timestamptz` : null,
        query.to ? sql`${query.to}::timestamptz` : null,
      )},
      'page', ${eventPage(newestFirst(where, query.limit + 1, newest), 'DESC')}) AS j`,
  );
  const { items, more } = pageOf(doc.page, query.limit);
  const last = items[items.length - 1];
  const next_cursor =
    more && last ? encodeCursor(cursorKey(config), 'events', [last.k, last.id, doc.snap], fh) : null;
  // Never a silent end: when retention removed events of the range, a walk says where the stored events stop and where
  // the older ones are: on every page with `from`, else on its last.
  return {
    events: items.map((r) => r.e),
    next_cursor,
    limit: query.limit,
    ...retentionNotice(config, doc.dropped === true && (query.from !== undefined || next_cursor === null)),
  };
}

/** One event, with its prompt as stored (truncated at ingest), its full texts and skills, and its metadata. */
export async function getEvent(db: Db, id: string) {
  const doc = await queryDoc<Record<string, unknown> | null>(
    db,
    sql`SELECT ${eventJson(true)} AS j FROM observability_events e WHERE e.id = ${id}::bigint`,
  );
  if (!doc) throw notFound('No event with this id.');
  return doc;
}

/** Distinct values listed in a session's header; `<name>_total` says how many there are. */
const SESSION_LIST_MAX = 20;

/**
 * A session's calls in order (oldest first, keyset-paginated) and its totals, with at most 20 devices, agent types,
 * actors and models and the count of each. 404 when it has no event.
 *
 * Retention: when it has dropped a day that held events and began before the session's first stored event, older
 * events of the session may have been in it, so every page says so (archived_before, archive_location, as the event
 * list does; its totals count stored events only). Only the archive could tell whether it had events there, so once
 * retention has dropped a day with events nearly every session says so; before that, none does. A session none of
 * whose events is stored is a 404 whose message says that older events are no longer stored, and where they are.
 */
export async function getSession(
  db: Db,
  config: Pick<Config, 'auth' | 'events'>,
  sessionId: string,
  query: SessionQuery,
) {
  const fh = filterHash({ session_id: sessionId });
  const where: SQL[] = [sql`e.session_id = ${sessionId}`];
  if (query.cursor) {
    const [t, id] = decodeCursor(cursorKey(config), query.cursor, 'session', fh, [TS_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) > (${t}::timestamptz, ${id}::bigint)`);
  }
  const distinctList = (
    col: 'agent_type' | 'actor_email' | 'model',
    name: 'agent_types' | 'actors' | 'models',
  ): SQL =>
    sql`${lit(name)}, (SELECT coalesce(json_agg(x.v ORDER BY x.v), '[]'::json) FROM (SELECT DISTINCT
        ${sql.raw(col)} AS v FROM observability_events WHERE session_id = ${sessionId} AND ${sql.raw(col)} IS NOT NULL
        ORDER BY 1 LIMIT ${SESSION_LIST_MAX}) x),
      ${lit(`${name}_total`)}, (SELECT count(DISTINCT ${sql.raw(col)})::int FROM observability_events
        WHERE session_id = ${sessionId})`;
  const doc = await queryDoc<{
    session: { calls: number } | null;
    dropped: boolean;
    page: Bounded<EventRow>;
  }>(
    db,
    sql`SELECT json_build_object(
      'dropped', ${droppedWithin(
        null,
        sql`coalesce((SELECT min(event_time) FROM observability_events WHERE session_id = ${sessionId}),
          'infinity'::timestamptz)`,
      )},
      'session', (SELECT json_build_object('session_id', ${sessionId}::text, 'calls', count(*)::int,
          'first_event_at', ${iso(sql`min(e.event_time)`)}, 'last_event_at', ${iso(sql`max(e.event_time)`)},
          'allowed', (count(*) FILTER (WHERE e.result = 'allowed'))::int,
          'denied', (count(*) FILTER (WHERE e.result = 'denied'))::int,
          'errors', (count(*) FILTER (WHERE e.result = 'error'))::int,
          'tokens_in', coalesce(sum(e.tokens_in), 0)::bigint, 'tokens_out', coalesce(sum(e.tokens_out), 0)::bigint,
          'duration_ms', coalesce(sum(e.duration_ms), 0)::bigint,
          'devices', (SELECT coalesce(json_agg(json_build_object('device_id', x.device_id::text,
              'serial_number', x.serial_number) ORDER BY x.serial_number, x.device_id), '[]'::json)
            FROM (SELECT device_id, serial_number FROM observability_events WHERE session_id = ${sessionId}
              GROUP BY 1, 2 ORDER BY 2, 1 LIMIT ${SESSION_LIST_MAX}) x),
          'devices_total', (SELECT count(DISTINCT device_id)::int FROM observability_events
            WHERE session_id = ${sessionId}),
          ${distinctList('agent_type', 'agent_types')}, ${distinctList('actor_email', 'actors')},
          ${distinctList('model', 'models')})
        FROM observability_events e WHERE e.session_id = ${sessionId}),
      'page', ${eventPage(
        sql`SELECT * FROM observability_events e WHERE ${and(where)} ORDER BY e.event_time, e.id
          LIMIT ${query.limit + 1}`,
        'ASC',
      )}) AS j`,
  );
  const notice = retentionNotice(config, doc.dropped === true);
  if (!doc.session || Number(doc.session.calls) === 0) {
    if (!notice.archived_before) throw notFound('No event carries this session id.');
    throw notFound(
      `No stored event carries this session id. Events before ${notice.archived_before} are no longer in the ` +
        (notice.archive_location
          ? `database; they are archived in ${notice.archive_location}.`
          : 'database (no archive is configured).'),
    );
  }
  const { items, more } = pageOf(doc.page, query.limit);
  const last = items[items.length - 1];
  return {
    session: doc.session,
    events: items.map((r) => r.e),
    next_cursor: more && last ? encodeCursor(cursorKey(config), 'session', [last.k, last.id], fh) : null,
    limit: query.limit,
    ...notice,
  };
}
