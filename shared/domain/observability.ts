// Admin observability (issue 4): the MCP tool-call event browser, sessions, the summary and the filter values.
//
// DESIGN (figures: `npm run bench:observability`, test/bench/observability.ts; recorded in the README)
//
// * Rollups folded from the stored events. The ingest statement (shared/domain/events.ts) stores events only, each
//   stamped with its transaction (ingest_xid); observability_fold() (observability-rollups.ts) upserts the
//   aggregates of the events of every finished transaction since its watermark, exactly once each, and every reader
//   of the rollups calls it first (foldRollups), so reads are as fresh as when ingest wrote the rollups itself; a
//   schedule (observability/fold) keeps the backlog small. In the ingest statement they were ~20 of ~85 ms of a
//   1000-event batch (~870 rows upserted per batch); a fold upserts each row once for all batches since the last.
//   Only the finest grain (hourly calls, daily actors, minute series) is grouped from the events; the coarser rows
//   are summed from those rows (buckets nest):
//   - observability_rollups kind 'call', hourly, 6-hourly, daily and weekly (ISO), keyed by (agent, MCP, tool, event type,
//     result, deny code, rule, model): calls, denied, errors, tokens in / out, duration sum / max and a 64-bucket
//     log histogram of durations in h1..h64 (factor 1.25: a percentile is the upper bound of the bucket holding the
//     nearest rank, at most 25 % above the exact value, capped by the maximum; empty buckets are NULL). Their count
//     is the number of distinct keys per bucket, not of events (the benchmark fleet: ~230 a bucket). A range reads
//     weekly rows for the weeks inside it, daily rows for the other whole days, 6-hourly rows for the other whole
//     quarter days, hourly rows for the rest (segments()): 30 days are ~3k rows, 24 hours ~4k (25 hourly: 9k). No index INCLUDEs a measure, so upserts are HOT updates
//     (fillfactor 80) and the rows of a bucket stay on the pages where they were created.
//   - observability_rollups kind 'actor', daily and weekly, keyed by (actor, group). Not hourly and not crossed with
//     the call key: actor x tool x hour rows would be as many as the events.
//   - observability_series, per minute, hour and day, keyed by (event type, result): the time series. Minute rows
//     exist only here (about 4 a minute, kept like the events).
// * The summary's range is widened to whole buckets (hours for bucket=minute and hour, days for day); its actor
//   section to whole UTC days. The response states both ranges and where each part came from (`source`). The call
//   rows of the range are summed per call key (~600 rows) and, separately, their histograms per tool; totals, the
//   breakdowns (one hashed GROUPING SETS pass) and the top lists come from those. Filters on call-key columns stay on
//   the rollups; filters on device, serial, session, actor, group, skill or free text read the events of the range
//   (index range scans for device / serial / session / actor; the cost of the others grows with the range). The
//   series stays on observability_series with no filter or only event type / result filters, on the call rollups
//   with other call-key filters (not for minutes), else on the events. The actor section stays on rollups when only
//   actor / group filters are used; with any other filter it is aggregated from the events of the range.
// * Event browser: keyset on (event_time DESC, id DESC) — id is the unique tie-break — with composite indexes
//   (x, event_time DESC, id DESC) for device, MCP + tool, agent, actor, session, deny code, a partial index for
//   denied / error and one for events carrying text (free-text filter), so a page is one index range scan of
//   limit + 1 matching rows at any depth (all DESC NULLS LAST, the order the queries ask for: an index with the
//   other NULLS order cannot serve it). serial is resolved to device ids. The first page pins the largest id into
//   the cursor (a snapshot): events arriving while someone pages never shift or repeat rows. Cursors are opaque
//   base64url, checksummed, bound to the list and its filters (observability-cursor.ts).
// * No partitioning and no BRIN: the summary never scans events without a selective filter, and pages are B-tree
//   range scans whose cost does not grow with the table; BRIN on event_time would only help the raw path's range
//   scans, which the time index already serves. Monthly partitions become worth it with a retention policy.
// * Response size: observability-bounds.ts (rows and bytes per page, shortened text in list views, 64 KB rows).
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { tsParam, uuidParam } from '../db/sql-values.ts';
import { notFound } from '../http/errors.ts';
import { invalidField } from '../http/validation.ts';
import type {
  EventFilters,
  FiltersQuery,
  ListEventsQuery,
  SessionQuery,
  SummaryQuery,
} from '../schemas/observability.ts';
import {
  type Bounded,
  boundedArray,
  LIST_BYTES,
  PAGE_BYTES,
  pageOf,
  queryDoc,
  SKILL_PREVIEW_CHARS,
  SKILLS_PREVIEW,
  TEXT_PREVIEW_CHARS,
} from './observability-bounds.ts';
import {
  decodeCursor,
  encodeCursor,
  filterHash,
  ID_RE,
  iso,
  isoUs,
  likePattern,
  TS_RE,
} from './observability-cursor.ts';
import {
  CALL_KEY,
  callRowsSql,
  foldRollups,
  type Grain,
  HIST_COLUMNS,
  histPercentile,
} from './observability-rollups.ts';

const and = (parts: SQL[]): SQL => (parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`);
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
const MONDAY = 4 * DAY; // 1970-01-05, the first Monday after the epoch: ISO weeks start there.
const STEP: Record<Grain, number> = { minute: 60_000, hour: HOUR, '6h': 6 * HOUR, day: DAY, week: WEEK };
const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;
const floorWeek = (t: number) => Math.floor((t - MONDAY) / WEEK) * WEEK + MONDAY;
const ceilWeek = (t: number) => Math.ceil((t - MONDAY) / WEEK) * WEEK + MONDAY;

/** A grain or kind as an SQL literal (a closed set: literals let the planner match partial indexes). */
const lit = (value: string): SQL => sql.raw(`'${value}'`);

interface Segment {
  grain: Grain;
  from: number;
  to: number;
}

type CoverGrain = 'week' | 'day' | '6h' | 'hour';
const FLOOR: Record<CoverGrain, (t: number) => number> = {
  week: floorWeek,
  day: (t) => floorTo(t, DAY),
  '6h': (t) => floorTo(t, STEP['6h']),
  hour: (t) => floorTo(t, HOUR),
};
const CEIL: Record<CoverGrain, (t: number) => number> = {
  week: ceilWeek,
  day: (t) => ceilTo(t, DAY),
  '6h': (t) => ceilTo(t, STEP['6h']),
  hour: (t) => ceilTo(t, HOUR),
};

/** [f, t) as the fewest buckets of `grains` (coarsest first; f and t aligned to the last): the whole coarse buckets
 * inside, then the finer ones around them. */
function cover(f: number, t: number, grains: readonly CoverGrain[]): Segment[] {
  const [grain, ...finer] = grains;
  if (!grain || f >= t) return [];
  if (finer.length === 0) return [{ grain, from: f, to: t }];
  const a = CEIL[grain](f);
  const b = FLOOR[grain](t);
  if (a >= b) return cover(f, t, finer);
  return [...cover(f, a, finer), { grain, from: a, to: b }, ...cover(b, t, finer)];
}

/**
 * The rollup buckets covering [f, t) (both aligned to `finest`): weekly rows for the ISO weeks inside, daily rows for
 * the other whole days, 6-hour rows for the other whole quarter days, hourly rows for the rest. 24 hours: at most
 * 5 + 3 + 5 rows per call key instead of 25.
 */
function segments(f: number, t: number, finest: 'hour' | 'day'): Segment[] {
  return cover(f, t, finest === 'hour' ? ['week', 'day', '6h', 'hour'] : ['week', 'day']);
}

const segmentCondition = (s: Segment): SQL =>
  sql`(grain = ${lit(s.grain)} AND bucket >= ${tsParam(new Date(s.from))} AND bucket < ${tsParam(new Date(s.to))})`;

/** The condition selecting the rollup rows of the segments (one bitmap scan of the key index). */
const segmentsWhere = (segs: Segment[]): SQL => sql`(${sql.join(segs.map(segmentCondition), sql` OR `)})`;

/** A range widened to whole units of `grain` (at least one). */
function align(from: Date, to: Date, grain: Grain) {
  const step = STEP[grain];
  const f = floorTo(from.getTime(), step);
  const t = Math.max(ceilTo(to.getTime(), step), f + step);
  return { from: new Date(f), to: new Date(t) };
}

/** A time range widened to whole hours, and the condition selecting the call rollup rows covering it. */
export function rangeOf(from: Date, to: Date, _align: 'hour' = 'hour') {
  const r = align(from, to, 'hour');
  const segs = segments(r.from.getTime(), r.to.getTime(), 'hour');
  return { ...r, rollupWhere: segmentsWhere(segs) };
}

/** Conditions on columns named alike in observability_events and observability_rollups. */
const DIMS = {
  agent_type: 'agent_type',
  mcp: 'mcp_name',
  tool: 'tool',
  event_type: 'event_type',
  result: 'result',
  deny_code: 'deny_code',
  rule: 'rule_applied',
  model: 'model',
  actor: 'actor_email',
  group: 'group_name',
} as const;
type DimKey = keyof typeof DIMS;
const CALL_KEYS: readonly DimKey[] = [
  'agent_type',
  'mcp',
  'tool',
  'event_type',
  'result',
  'deny_code',
  'rule',
  'model',
];
const SERIES_KEYS: readonly DimKey[] = ['event_type', 'result'];
const ACTOR_ROW_KEYS: readonly DimKey[] = ['actor', 'group'];
const ALL_FILTERS = [...Object.keys(DIMS), 'device_id', 'serial', 'session_id', 'skill', 'q'] as const;

function dimConditions(f: EventFilters, keys: readonly DimKey[], alias = ''): SQL[] {
  const out: SQL[] = [];
  for (const key of keys) {
    const value = f[key];
    if (value !== undefined) out.push(sql`${sql.raw(`${alias}${DIMS[key]}`)} = ${value}`);
  }
  return out;
}

/** WHERE conditions of the event filters on observability_events `e` (time range excluded). */
function eventConditions(f: EventFilters): SQL[] {
  const out = dimConditions(f, Object.keys(DIMS) as DimKey[], 'e.');
  if (f.device_id) out.push(sql`e.device_id = ${uuidParam(f.device_id)}`);
  if (f.serial) {
    // Through the device ids (the device index) rather than the unindexed serial column; the serial an event
    // carries is the one its device had, so the second condition only confirms it.
    out.push(sql`e.device_id IN (SELECT d.id FROM devices d WHERE d.serial_number = ${f.serial})`);
    out.push(sql`e.serial_number = ${f.serial}`);
  }
  if (f.session_id) out.push(sql`e.session_id = ${f.session_id}`);
  if (f.skill) out.push(sql`e.skills @> jsonb_build_array(${f.skill}::text)`);
  if (f.q) {
    const p = likePattern(f.q);
    // The first condition is implied by the second; stated, it lets the planner walk the text index.
    out.push(sql`(e.deny_reason IS NOT NULL OR e.error_message IS NOT NULL)`);
    out.push(sql`(e.deny_reason ILIKE ${p} OR e.error_message ILIKE ${p})`);
  }
  return out;
}

const usedFilters = (f: EventFilters): string[] =>
  ALL_FILTERS.filter((k) => (f as Record<string, unknown>)[k] !== undefined);

// ---- event browser ----

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

/** Events newest first, filtered, keyset-paginated on (event_time, id) with a snapshot of the newest id. */
export async function listEvents(db: Db, query: ListEventsQuery) {
  const fh = filterHash(query);
  const where = eventConditions(query);
  if (query.from) where.push(sql`e.event_time >= ${query.from}::timestamptz`);
  if (query.to) where.push(sql`e.event_time < ${query.to}::timestamptz`);
  // The snapshot: the newest id when the first page was read. Later pages leave out rows with larger ids (events
  // that arrived since). The first page needs no such condition: every row its statement sees has an id <= the
  // largest id that statement sees (and a condition on a value computed in the statement would cost the planner its
  // row estimate).
  let snapshot: SQL = sql`(SELECT coalesce(max(id), 0) FROM observability_events)`;
  if (query.cursor) {
    const [t, id, snap] = decodeCursor(query.cursor, 'events', fh, [TS_RE, ID_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) < (${t}::timestamptz, ${id}::bigint)`);
    where.push(sql`e.id <= ${snap}::bigint`);
    snapshot = sql`${snap}::bigint`;
  }
  const doc = await queryDoc<{ snap: string; page: Bounded<EventRow> }>(
    db,
    sql`SELECT json_build_object('snap', ${snapshot}::text,
      'page', ${eventPage(
        sql`SELECT * FROM observability_events e WHERE ${and(where)}
          ORDER BY e.event_time DESC NULLS LAST, e.id DESC NULLS LAST LIMIT ${query.limit + 1}`,
        'DESC',
      )}) AS j`,
  );
  const { items, more } = pageOf(doc.page, query.limit);
  const last = items[items.length - 1];
  return {
    events: items.map((r) => r.e),
    next_cursor: more && last ? encodeCursor('events', [last.k, last.id, doc.snap], fh) : null,
    limit: query.limit,
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
 */
export async function getSession(db: Db, sessionId: string, query: SessionQuery) {
  const fh = filterHash({ session_id: sessionId });
  const where: SQL[] = [sql`e.session_id = ${sessionId}`];
  if (query.cursor) {
    const [t, id] = decodeCursor(query.cursor, 'session', fh, [TS_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) > (${t}::timestamptz, ${id}::bigint)`);
  }
  const distinctList = (col: 'agent_type' | 'actor_email' | 'model', name: string): SQL =>
    sql`${lit(name)}, (SELECT coalesce(json_agg(x.v ORDER BY x.v), '[]'::json) FROM (SELECT DISTINCT
        ${sql.raw(col)} AS v FROM observability_events WHERE session_id = ${sessionId} AND ${sql.raw(col)} IS NOT NULL
        ORDER BY 1 LIMIT ${SESSION_LIST_MAX}) x),
      ${lit(`${name}_total`)}, (SELECT count(DISTINCT ${sql.raw(col)})::int FROM observability_events
        WHERE session_id = ${sessionId})`;
  const doc = await queryDoc<{
    session: { calls: number } | null;
    page: Bounded<EventRow>;
  }>(
    db,
    sql`SELECT json_build_object(
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
  if (!doc.session || Number(doc.session.calls) === 0) throw notFound('No event carries this session id.');
  const { items, more } = pageOf(doc.page, query.limit);
  const last = items[items.length - 1];
  return {
    session: doc.session,
    events: items.map((r) => r.e),
    next_cursor: more && last ? encodeCursor('session', [last.k, last.id], fh) : null,
    limit: query.limit,
  };
}

// ---- summary ----

/** Most points of a series (25 hours of minutes). */
const MAX_POINTS = 1500;

interface SummaryOptions {
  now?: Date;
  /** Force the raw path (the benchmark's baseline and the property test's recomputation). */
  source?: 'auto' | 'raw';
}

interface TopRow {
  calls: number;
  denied: number;
  errors: number;
  tokens_in: number;
  tokens_out: number;
  duration_sum: number;
  duration_max: number;
  hist?: number[] | null;
  [key: string]: unknown;
}

const MEASURE_LIST = ['calls', 'denied', 'errors', 'tokens_in', 'tokens_out', 'duration_sum'];
const MEASURES = `${MEASURE_LIST.map((m) => `sum(${m})::bigint AS ${m}`).join(', ')}, max(duration_max) AS duration_max`;
const HIST_SUMS = HIST_COLUMNS.map((c) => `coalesce(sum(${c}), 0)::bigint AS ${c}`).join(', ');
const KEY_COLUMNS = CALL_KEY.join(', ');
const measureJson = (t: string) =>
  `'calls', ${t}.calls, 'denied', ${t}.denied, 'errors', ${t}.errors, 'tokens_in', ${t}.tokens_in,
  'tokens_out', ${t}.tokens_out, 'duration_sum', ${t}.duration_sum, 'duration_max', ${t}.duration_max`;

/**
 * The small breakdowns come from one GROUPING SETS pass over the per-key rows; `gid` tells the sets apart (bit set =
 * column aggregated away; rightmost column = bit 0).
 */
const SET_COLUMNS = ['result', 'event_type', 'mcp_name', 'agent_type', 'model', 'deny_code', 'rule_applied'];
const SETS = [
  ['result'],
  ['event_type'],
  ['mcp_name'],
  ['agent_type'],
  ['model'],
  ['result', 'deny_code', 'rule_applied'],
  ['result', 'rule_applied'],
];
const gid = (set: readonly string[]) =>
  SET_COLUMNS.reduce(
    (mask, col, i) => (set.includes(col) ? mask : mask | (1 << (SET_COLUMNS.length - 1 - i))),
    0,
  );
const setRel = (set: readonly string[]) => `(SELECT * FROM gs WHERE gid = ${gid(set)}) AS q`;

/** A top-N list as a bounded array ({items, available}) of LIST_BYTES at most. */
/**
 * A top-N list as a bounded array ({items, available}) of LIST_BYTES at most. `hist` names a relation with the
 * histogram per the same keys, joined to the N rows.
 */
function topSql(rel: string, keys: readonly string[], n: number, extra?: string, hist?: string): SQL {
  const k = keys.join(', ');
  const where = [...(extra ? [extra] : []), ...keys.map((key) => `${key} <> ''`)].join(' AND ');
  const histJson = hist ? `, 'hist', json_build_array(${HIST_COLUMNS.map((c) => `h.${c}`).join(', ')})` : '';
  const join = hist ? ` JOIN ${hist} h USING (${k})` : '';
  return boundedArray(
    sql.raw(`SELECT json_build_object(${keys.map((key) => `'${key}', t.${key}`).join(', ')}, ${measureJson('t')}${histJson}) AS o,
        row_number() OVER (ORDER BY t.calls DESC, ${keys.map((x) => `t.${x}`).join(', ')}) AS rn
      FROM (SELECT ${k}, ${MEASURES} FROM ${rel} WHERE ${where} GROUP BY ${k}
        ORDER BY calls DESC, ${k} LIMIT ${n}) t${join}`),
    LIST_BYTES,
  );
}

const num = (v: unknown): number => Number(v ?? 0);

function shapeTop(rows: TopRow[], withPercentiles = false) {
  return rows.map(({ hist, duration_sum, duration_max, ...row }) => {
    const calls = num(row.calls);
    const out: Record<string, unknown> = {
      ...row,
      calls,
      denied: num(row.denied),
      errors: num(row.errors),
      tokens_in: num(row.tokens_in),
      tokens_out: num(row.tokens_out),
      deny_rate: calls ? Number((num(row.denied) / calls).toFixed(4)) : 0,
      duration_avg_ms: calls ? Math.round(num(duration_sum) / calls) : null,
      duration_max_ms: num(duration_max),
    };
    if (withPercentiles) {
      const h = (hist ?? []).map(Number);
      const max = num(duration_max);
      out.duration_p50_ms = histPercentile(h, 0.5, max);
      out.duration_p95_ms = histPercentile(h, 0.95, max);
      out.duration_p99_ms = histPercentile(h, 0.99, max);
    }
    return out;
  });
}

const TOP_LISTS = ['tools', 'mcps', 'agents', 'actors', 'models', 'deny_codes', 'rules'] as const;

/**
 * Totals by result and event type, deny rate, top N tools / MCPs / agents / models / deny codes / rules / actors,
 * tokens per tool / MCP / actor / agent, duration p50 / p95 / p99 per tool and overall, and a time series of calls,
 * denies, errors and tokens at `bucket`, over `from`..`to` (default the last 24 hours) with the event filters.
 * The range is widened to whole hours (whole days for bucket=day); the actor section to whole UTC days.
 */
export async function observabilitySummary(db: Db, query: SummaryQuery, options: SummaryOptions = {}) {
  const now = options.now ?? new Date();
  const toIn = query.to ? new Date(query.to) : now;
  const fromIn = query.from ? new Date(query.from) : new Date(toIn.getTime() - DAY);
  const span = toIn.getTime() - fromIn.getTime();
  const bucket: Grain = query.bucket ?? (span <= 2 * DAY ? 'hour' : 'day');
  // Totals and top lists come from hourly rows at the finest, so a minute series covers whole hours.
  const range = align(fromIn, toIn, bucket === 'day' ? 'day' : 'hour');
  const actorRange = align(fromIn, toIn, 'day');
  const points = (range.to.getTime() - range.from.getTime()) / STEP[bucket];
  if (points > MAX_POINTS) {
    throw invalidField(
      'query',
      ['bucket'],
      `${bucket} buckets over this range (widened to whole ${bucket === 'day' ? 'days' : 'hours'}) make ${points} points; at most ${MAX_POINTS} (choose a larger bucket or a shorter range)`,
    );
  }
  const used = usedFilters(query);
  const raw = options.source === 'raw';
  const only = (keys: readonly DimKey[]) => !raw && used.every((k) => keys.includes(k as DimKey));
  const callRollup = only(CALL_KEYS);
  const seriesSource: 'series' | 'rollups' | 'events' = only(SERIES_KEYS)
    ? 'series'
    : callRollup && bucket !== 'minute'
      ? 'rollups'
      : 'events';
  const actorRollup = only(ACTOR_ROW_KEYS);
  const F = tsParam(range.from);
  const T = tsParam(range.to);
  const events = (r: { from: Date; to: Date }) => sql`(SELECT * FROM observability_events e
    WHERE e.event_time >= ${tsParam(r.from)} AND e.event_time < ${tsParam(r.to)} AND ${and(eventConditions(query))})`;
  const callDims = and(dimConditions(query, CALL_KEYS));
  // Per call key over the range: calls, denied, errors, tokens, duration sum / max and the histogram.
  // The call rows of the range: the rollup rows of its buckets, or the events aggregated per call key (measures and
  // histogram). The rollup path reads them twice (measures per key, histograms per tool), cheaper than keeping
  // thousands of 80-column rows in a CTE; the raw path computes them once (~hundreds of rows) and keeps them.
  const callWhere = sql`kind = 'call'
    AND ${segmentsWhere(segments(range.from.getTime(), range.to.getTime(), bucket === 'day' ? 'day' : 'hour'))}
    AND ${callDims}`;
  const callCtes = callRollup
    ? sql`k AS MATERIALIZED (SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURES)} FROM observability_rollups
          WHERE ${callWhere} GROUP BY ${sql.raw(KEY_COLUMNS)}),
        th AS MATERIALIZED (SELECT mcp_name, tool, ${sql.raw(HIST_SUMS)} FROM observability_rollups
          WHERE ${callWhere} GROUP BY mcp_name, tool)`
    : sql`r AS MATERIALIZED (${callRowsSql(events(range))}),
        k AS MATERIALIZED (SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURES)} FROM r GROUP BY ${sql.raw(KEY_COLUMNS)}),
        th AS MATERIALIZED (SELECT mcp_name, tool, ${sql.raw(HIST_SUMS)} FROM r GROUP BY mcp_name, tool)`;
  const unit = lit(bucket);
  const seriesMeasures = sql.raw(
    'sum(calls)::bigint AS calls, sum(denied)::bigint AS denied, sum(errors)::bigint AS errors, sum(tokens_in)::bigint AS tokens_in, sum(tokens_out)::bigint AS tokens_out',
  );
  const seriesRel =
    seriesSource === 'series'
      ? sql`SELECT bucket AT TIME ZONE 'UTC' AS b, ${seriesMeasures} FROM observability_series
          WHERE grain = ${unit} AND bucket >= ${F} AND bucket < ${T} AND ${and(dimConditions(query, SERIES_KEYS))}
          GROUP BY 1`
      : seriesSource === 'rollups'
        ? sql`SELECT bucket AT TIME ZONE 'UTC' AS b, ${seriesMeasures} FROM observability_rollups
            WHERE kind = 'call' AND grain = ${unit} AND bucket >= ${F} AND bucket < ${T} AND ${callDims} GROUP BY 1`
        : sql`SELECT date_trunc(${unit}, e.event_time AT TIME ZONE 'UTC') AS b, count(*)::bigint AS calls,
              count(*) FILTER (WHERE e.result = 'denied') AS denied, count(*) FILTER (WHERE e.result = 'error') AS errors,
              sum(e.tokens_in)::bigint AS tokens_in, sum(e.tokens_out)::bigint AS tokens_out
            FROM ${events(range)} e GROUP BY 1`;
  // Actor rows, not yet summed (the top list sums them once).
  const actorRel = actorRollup
    ? sql`SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max
        FROM observability_rollups WHERE kind = 'actor'
          AND ${segmentsWhere(segments(actorRange.from.getTime(), actorRange.to.getTime(), 'day'))}
          AND ${and(dimConditions(query, ACTOR_ROW_KEYS))}`
    : sql`SELECT coalesce(e.actor_email, '') AS actor_email, count(*)::bigint AS calls,
          count(*) FILTER (WHERE e.result = 'denied') AS denied, count(*) FILTER (WHERE e.result = 'error') AS errors,
          sum(e.tokens_in)::bigint AS tokens_in, sum(e.tokens_out)::bigint AS tokens_out,
          sum(e.duration_ms)::bigint AS duration_sum, max(e.duration_ms) AS duration_max
        FROM ${events(actorRange)} e GROUP BY 1`;
  const n = query.top;
  await foldRollups(db);
  const doc = await queryDoc<
    {
      totals: TopRow | null;
      by_result: Record<string, number> | null;
      by_event_type: Record<string, number> | null;
      series: SeriesRow[] | null;
    } & Record<(typeof TOP_LISTS)[number], Bounded<TopRow>>
  >(
    db,
    sql`WITH ${callCtes},
      a AS (${actorRel}),
      tot AS (SELECT * FROM (SELECT ${sql.raw(MEASURES)} FROM k) m, (SELECT ${sql.raw(HIST_SUMS)} FROM th) h),
      gs AS MATERIALIZED (SELECT GROUPING(${sql.raw(SET_COLUMNS.join(', '))}) AS gid, ${sql.raw(SET_COLUMNS.join(', '))},
          ${sql.raw(MEASURES)}
        FROM k GROUP BY GROUPING SETS (${sql.raw(SETS.map((set) => `(${set.join(', ')})`).join(', '))})),
      sr AS (${seriesRel})
    SELECT json_build_object(
      'totals', (SELECT json_build_object(${sql.raw(measureJson('tot'))},
          'hist', json_build_array(${sql.raw(HIST_COLUMNS.map((h) => `tot.${h}`).join(', '))})) FROM tot),
      'tools', ${topSql('k', ['mcp_name', 'tool'], n, undefined, 'th')},
      'by_result', (SELECT json_object_agg(result, calls) FROM gs WHERE gid = ${gid(['result'])}),
      'by_event_type', (SELECT json_object_agg(event_type, calls) FROM gs WHERE gid = ${gid(['event_type'])}),
      'mcps', ${topSql(setRel(['mcp_name']), ['mcp_name'], n)},
      'agents', ${topSql(setRel(['agent_type']), ['agent_type'], n)},
      'models', ${topSql(setRel(['model']), ['model'], n)},
      'deny_codes', ${topSql(setRel(['result', 'deny_code', 'rule_applied']), ['deny_code', 'rule_applied'], n, `result = 'denied'`)},
      'rules', ${topSql(setRel(['result', 'rule_applied']), ['rule_applied'], n, `result = 'denied'`)},
      'actors', ${topSql('a', ['actor_email'], n)},
      'series', (SELECT json_agg(json_build_array(extract(epoch FROM s.b)::bigint, s.calls, s.denied, s.errors,
          s.tokens_in, s.tokens_out) ORDER BY s.b) FROM sr s)) AS j`,
  );
  const totals = (doc.totals ?? {}) as TopRow;
  const calls = num(totals.calls);
  const hist = (totals.hist ?? []).map(Number);
  const max = num(totals.duration_max);
  const top = Object.fromEntries(
    TOP_LISTS.map((name) => [name, shapeTop(doc[name].items, name === 'tools')]),
  ) as Record<(typeof TOP_LISTS)[number], Record<string, unknown>[]>;
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString(), bucket },
    actor_range: { from: actorRange.from.toISOString(), to: actorRange.to.toISOString() },
    source: {
      calls: callRollup ? 'rollups' : 'events',
      series: seriesSource,
      actors: actorRollup ? 'rollups' : 'events',
    },
    filters: Object.fromEntries(used.map((k) => [k, (query as Record<string, unknown>)[k]])),
    totals: {
      calls,
      by_result: { allowed: 0, denied: 0, error: 0, ...mapNumbers(doc.by_result) },
      by_event_type: { invocation: 0, result: 0, error: 0, ...mapNumbers(doc.by_event_type) },
      denied: num(totals.denied),
      errors: num(totals.errors),
      deny_rate: calls ? Number((num(totals.denied) / calls).toFixed(4)) : 0,
      error_rate: calls ? Number((num(totals.errors) / calls).toFixed(4)) : 0,
      tokens_in: num(totals.tokens_in),
      tokens_out: num(totals.tokens_out),
      duration_avg_ms: calls ? Math.round(num(totals.duration_sum) / calls) : null,
      duration_p50_ms: histPercentile(hist, 0.5, max),
      duration_p95_ms: histPercentile(hist, 0.95, max),
      duration_p99_ms: histPercentile(hist, 0.99, max),
      duration_max_ms: max,
    },
    top,
    // Top lists the byte bound (LIST_BYTES each) cut below `top` entries: only with very long names.
    top_truncated: TOP_LISTS.filter((name) => doc[name].items.length < doc[name].available),
    series: seriesPoints(doc.series, range, STEP[bucket]),
  };
}

/** A non-empty bucket as the database returns it: [start in epoch seconds, calls, denied, errors, tokens in, out]. */
type SeriesRow = [number, number, number, number, number, number];

/** Every bucket of the range, in order, zero where the database returned none (cheaper than 1,500 JSON objects). */
function seriesPoints(rows: SeriesRow[] | null, range: { from: Date; to: Date }, step: number) {
  const at = new Map((rows ?? []).map((r) => [Number(r[0]) * 1000, r]));
  const points = [];
  for (let b = range.from.getTime(); b < range.to.getTime(); b += step) {
    const r = at.get(b);
    points.push({
      bucket: new Date(b).toISOString().replace('.000Z', 'Z'),
      calls: num(r?.[1]),
      denied: num(r?.[2]),
      errors: num(r?.[3]),
      tokens_in: num(r?.[4]),
      tokens_out: num(r?.[5]),
    });
  }
  return points;
}

const mapNumbers = (o: Record<string, unknown> | null): Record<string, number> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, num(v)]));

// ---- filter values ----

/** Latest events of the range sampled for the session and skill values (no rollup holds them). */
const FILTER_SAMPLE_EVENTS = 5000;

/**
 * The values each filter can take in a range (default the last 7 days), for the dashboard's dropdowns. Each list
 * is {values, total, truncated}, at most `limit` values and LIST_BYTES bytes:
 * - agent_type, mcp, tool, event_type, result, deny_code, rule, model (call rollups), actor, group (actor rollups,
 *   whole UTC days): every value of the range with its calls, most calls first; `total` counts them all.
 * - device and serial: the devices with events in the range, most recently active first (last_event_at; an index
 *   probe per device, no count).
 * - session and skill: the values carried by the range's 5,000 latest events (sessions most recent first, skills
 *   by calls in that sample): there is no rollup of these high-cardinality values. `total` is null.
 */
export async function observabilityFilters(db: Db, query: FiltersQuery, now = new Date()) {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 7 * DAY);
  const range = rangeOf(from, to);
  const days = align(from, to, 'day');
  const lim = query.limit;
  const F = tsParam(from);
  const T = tsParam(to);
  const bounded = (rows: string, total: string): SQL =>
    sql`(SELECT json_build_object('values', b->'items', 'available', (b->>'available')::int, 'total', ${sql.raw(total)})
      FROM (SELECT ${boundedArray(sql.raw(rows), LIST_BYTES)} AS b) x)`;
  const counted = (rel: 'f' | 'fa', col: string): SQL =>
    bounded(
      `SELECT json_build_object('value', v, 'calls', n) AS o, row_number() OVER (ORDER BY n DESC, v) AS rn
        FROM (SELECT ${col} AS v, sum(calls)::bigint AS n FROM ${rel} WHERE ${col} <> '' GROUP BY 1
          ORDER BY 2 DESC, 1 LIMIT ${lim}) y`,
      `(SELECT count(DISTINCT ${col})::int FROM ${rel} WHERE ${col} <> '')`,
    );
  await foldRollups(db);
  const doc = await queryDoc<Record<string, { values: unknown[]; available: number; total: number | null }>>(
    db,
    sql`WITH f AS MATERIALIZED (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
          calls FROM observability_rollups WHERE kind = 'call' AND ${range.rollupWhere}),
      fa AS MATERIALIZED (SELECT actor_email, group_name, calls FROM observability_rollups
        WHERE kind = 'actor' AND grain = 'day' AND bucket >= ${tsParam(days.from)} AND bucket < ${tsParam(days.to)}),
      dv AS MATERIALIZED (SELECT d.id, d.serial_number, d.last_event_at FROM devices d
        WHERE d.last_event_at >= ${F} AND EXISTS (SELECT 1 FROM observability_events e
          WHERE e.device_id = d.id AND e.event_time >= ${F} AND e.event_time < ${T})
        ORDER BY d.last_event_at DESC, d.id LIMIT ${lim + 1}),
      sample AS MATERIALIZED (SELECT e.session_id, e.skills, e.event_time FROM observability_events e
        WHERE e.event_time >= ${F} AND e.event_time < ${T}
        ORDER BY e.event_time DESC NULLS LAST, e.id DESC NULLS LAST LIMIT ${FILTER_SAMPLE_EVENTS})
    SELECT json_build_object(
      'agent_type', ${counted('f', 'agent_type')}, 'mcp', ${counted('f', 'mcp_name')},
      'tool', ${counted('f', 'tool')}, 'event_type', ${counted('f', 'event_type')},
      'result', ${counted('f', 'result')}, 'deny_code', ${counted('f', 'deny_code')},
      'rule', ${counted('f', 'rule_applied')}, 'model', ${counted('f', 'model')},
      'actor', ${counted('fa', 'actor_email')}, 'group', ${counted('fa', 'group_name')},
      'device', ${bounded(
        `SELECT json_build_object('value', id::text, 'serial_number', serial_number,
            'last_event_at', to_char(last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS o,
          row_number() OVER (ORDER BY last_event_at DESC, id) AS rn FROM dv`,
        'NULL::int',
      )},
      'serial', ${bounded(
        `SELECT json_build_object('value', serial_number) AS o, row_number() OVER (ORDER BY serial_number) AS rn
          FROM (SELECT DISTINCT serial_number FROM dv) s`,
        'NULL::int',
      )},
      'session', ${bounded(
        `SELECT json_build_object('value', session_id, 'calls', n, 'last_event_at',
            to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS o,
          row_number() OVER (ORDER BY t DESC, session_id) AS rn
          FROM (SELECT session_id, count(*) AS n, max(event_time) AS t FROM sample WHERE session_id IS NOT NULL
            GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT ${lim + 1}) s`,
        'NULL::int',
      )},
      'skill', ${bounded(
        `SELECT json_build_object('value', v, 'calls', n) AS o, row_number() OVER (ORDER BY n DESC, v) AS rn
          FROM (SELECT x.v, count(*) AS n FROM sample, jsonb_array_elements_text(sample.skills) AS x(v)
            GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${lim + 1}) s`,
        'NULL::int',
      )}) AS j`,
  );
  const values = Object.fromEntries(
    Object.entries(doc).map(([name, list]) => [
      name,
      {
        values: list.values.slice(0, lim),
        total: list.total,
        truncated: Math.min(list.values.length, lim) < (list.total ?? list.available),
      },
    ]),
  );
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString() },
    actor_range: { from: days.from.toISOString(), to: days.to.toISOString() },
    limit: lim,
    sampled_events: FILTER_SAMPLE_EVENTS,
    values,
  };
}
