// Admin observability (issue 4): the MCP tool-call event browser, sessions, the summary and the filter values.
//
// DESIGN (measured with `npm run bench:observability`, test/bench/observability.ts; figures in the reply of issue 4)
//
// Measured first: the summary computed from the events (the same aggregate, "raw path") costs ~35 us per event on
// PostgreSQL — 7 s for 30 days of 200k events, minutes at 5M — so every summary figure comes from rollups.
//
// * Rollups maintained at ingest (observability_rollups, migrations/0002_observability.sql). The ingest statement
//   (shared/domain/events.ts) upserts, in one more CTE of its single statement, the aggregate of exactly the rows it
//   inserted (duplicates by event_id never count twice; all or nothing), in key order so that concurrent batches
//   lock shared rows in the same order. Two kinds of rows:
//   - 'call' rows, hourly, daily and weekly (ISO), keyed by (agent, MCP, tool, event type, result, deny code, rule,
//     model): calls, denied, errors, tokens in / out, duration sum / max and a 64-bucket log histogram of durations
//     in columns h1..h64 (factor 1.25: a percentile is the upper bound of its bucket, <= 25 % above the exact
//     nearest-rank value, capped by the maximum; empty buckets are NULL, one bit each). At fleet scale these
//     saturate at ~230 rows per hour, day or week whatever the event count. A range reads weekly rows for the
//     weeks inside it, daily rows for the other whole days, hourly rows for the rest (rangeOf): 30 days is ~2k
//     rows; the series reads only the rows of its bucket grain (30 daily buckets: ~7k narrow rows).
//   - 'actor' rows, daily and weekly, keyed by (actor, group). Not hourly and not crossed with the call keys:
//     actor x tool x hour rows would be as many as the events (2,000 actors, a few calls per actor-hour). A range
//     reads weekly rows for the weeks inside it and daily rows for the rest (30 days: ~14k instead of 60k rows),
//     by an index-only scan (partial covering index).
// * The summary's range is widened to whole buckets (minute / hour / day); its actor section to whole UTC days. The
//   response states both ranges. The small breakdowns (by result, event type, MCP, agent, model, deny code, rule)
//   come from one hashed GROUPING SETS pass over the call rows; tools and their histograms from one more. Filters on rollup keys (agent, MCP, tool, event type, result, deny code, rule, model) stay on the
//   rollups; filters on device, serial, session, actor, group, skill or free text, and bucket=minute, use the raw
//   path over the range (device / session / actor filters are index range scans; free text over long ranges is
//   bounded by db.statement_timeout). The actor section stays on rollups when only actor / group filters are used;
//   with call-key filters it is aggregated from the events of the range (known cost: ~1.2 s for 30 days of 5M
//   events with agent + result filters; an (actor, agent, result) rollup would fix it at ~6x the actor rows).
// * Event browser: keyset on (event_time DESC, id DESC) — id is the unique tie-break — with composite indexes
//   (x, event_time DESC, id DESC) for device, MCP + tool, agent, actor, session, and a partial index for
//   denied / error, so any page at any depth is an index range scan of limit + 1 rows. The first page pins the
//   largest id into the cursor (a snapshot): events arriving while someone pages never shift or repeat rows.
//   Cursors are opaque base64url, checksummed, bound to the list and its filters (observability-cursor.ts).
// * No partitioning and no BRIN: with the rollups the summary never scans events, and pages are B-tree range scans
//   whose cost does not grow with the table; BRIN on event_time would only help the raw path's range scans. Monthly
//   partitions become worth it with a retention policy (dropping a month is then instant).
// * Response size: lists are <= 100 rows whose items carry a 200-character prompt preview and no metadata (the
//   detail carries both, metadata up to 256 KiB), top lists are <= 50 rows, the series <= 1,500 points: every
//   response stays far below the Data API's 1 MiB.
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { queryJson } from '../db/query.ts';
import { tsParam, uuidParam } from '../db/sql-values.ts';
import { notFound, validationFailed } from '../http/errors.ts';
import type {
  EventFilters,
  FiltersQuery,
  ListEventsQuery,
  SessionQuery,
  SummaryQuery,
} from '../schemas/observability.ts';
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
import { type Grain, HIST_COLUMNS, histPercentile, rollupSelectSql } from './observability-rollups.ts';

const and = (parts: SQL[]): SQL => (parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`);
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
const MONDAY = 4 * DAY; // 1970-01-05, the first Monday after the epoch: ISO weeks start there.
const STEP: Record<Grain, number> = { minute: 60_000, hour: HOUR, day: DAY, week: WEEK };
const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;

/**
 * A time range widened to whole `align` units, and the call rollup rows covering it: weekly rows for the ISO weeks
 * inside, daily rows for the other whole days, hourly rows for the rest (30 days: ~4 x 230 + <= 6 x 230 rows).
 */
export function rangeOf(from: Date, to: Date, align: 'minute' | 'hour') {
  const step = STEP[align];
  const f = floorTo(from.getTime(), step);
  const t = Math.max(ceilTo(to.getTime(), step), f + step);
  const d1 = ceilTo(f, DAY);
  const d2 = floorTo(t, DAY);
  const w1 = Math.ceil((d1 - MONDAY) / WEEK) * WEEK + MONDAY;
  const w2 = Math.floor((d2 - MONDAY) / WEEK) * WEEK + MONDAY;
  const [F, T, D1, D2, W1, W2] = [f, t, d1, d2, w1, w2].map((x) => tsParam(new Date(x)));
  const rollupWhere = sql`bucket >= ${F} AND bucket < ${T}
    AND ((grain = 'week' AND bucket >= ${W1} AND bucket < ${W2})
      OR (grain = 'day' AND bucket >= ${D1} AND bucket < ${D2} AND NOT (bucket >= ${W1} AND bucket < ${W2}))
      OR (grain = 'hour' AND NOT (bucket >= ${D1} AND bucket < ${D2})))`;
  return { from: new Date(f), to: new Date(t), rollupWhere };
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
  if (f.serial) out.push(sql`e.serial_number = ${f.serial}`);
  if (f.session_id) out.push(sql`e.session_id = ${f.session_id}`);
  if (f.skill) out.push(sql`e.skills @> jsonb_build_array(${f.skill}::text)`);
  if (f.q) {
    const p = likePattern(f.q);
    out.push(sql`(e.deny_reason ILIKE ${p} OR e.error_message ILIKE ${p})`);
  }
  return out;
}

const usedFilters = (f: EventFilters): string[] =>
  ALL_FILTERS.filter((k) => (f as Record<string, unknown>)[k] !== undefined);

// ---- event browser ----

const PREVIEW_CHARS = 200;
const METADATA_MAX_BYTES = 256 * 1024;

const eventJson = (
  full: boolean,
): SQL => sql`json_build_object('id', e.id::text, 'event_id', e.event_id::text,
  'device_id', e.device_id::text, 'serial_number', e.serial_number, 'source_ip', e.source_ip,
  'received_at', ${iso(sql`e.received_at`)}, 'event_time', ${iso(sql`e.event_time`)}, 'agent_type', e.agent_type,
  'mcp_name', e.mcp_name, 'tool', e.tool, 'event_type', e.event_type, 'result', e.result,
  'deny_code', e.deny_code, 'deny_reason', e.deny_reason, 'error_message', e.error_message,
  'rule_applied', e.rule_applied, 'model', e.model, 'session_id', e.session_id, 'group', e.group_name,
  'actor_email', e.actor_email, 'tokens_in', e.tokens_in, 'tokens_out', e.tokens_out,
  'duration_ms', e.duration_ms, 'skills', e.skills, 'prompt_truncated', e.prompt_truncated,
  ${
    full
      ? sql`'prompt', e.prompt, 'metadata', CASE WHEN octet_length(e.metadata::text) <= ${METADATA_MAX_BYTES}
          THEN e.metadata END, 'metadata_omitted', octet_length(e.metadata::text) > ${METADATA_MAX_BYTES}`
      : sql`'prompt_preview', left(e.prompt, ${PREVIEW_CHARS})`
  })`;

/** Events newest first, filtered, keyset-paginated on (event_time, id) with a snapshot of the newest id. */
export async function listEvents(db: Db, query: ListEventsQuery) {
  const fh = filterHash(query);
  const where = eventConditions(query);
  if (query.from) where.push(sql`e.event_time >= ${query.from}::timestamptz`);
  if (query.to) where.push(sql`e.event_time < ${query.to}::timestamptz`);
  let snapshot: SQL;
  if (query.cursor) {
    const [t, id, snap] = decodeCursor(query.cursor, 'events', fh, [TS_RE, ID_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) < (${t}::timestamptz, ${id}::bigint)`);
    snapshot = sql`${snap}::bigint`;
  } else {
    snapshot = sql`(SELECT coalesce(max(id), 0) FROM observability_events)`;
  }
  const doc = await queryJson<{ snap: string; rows: { k: string; id: string; e: unknown }[] | null }>(
    db,
    sql`WITH snap AS (SELECT ${snapshot} AS m)
    SELECT json_build_object('snap', (SELECT m FROM snap)::text,
      'rows', (SELECT json_agg(json_build_object('k', ${isoUs(sql`e.event_time`)}, 'id', e.id::text,
          'e', ${eventJson(false)}) ORDER BY e.event_time DESC, e.id DESC)
        FROM (SELECT * FROM observability_events e WHERE ${and(where)} AND e.id <= (SELECT m FROM snap)
              ORDER BY e.event_time DESC, e.id DESC LIMIT ${query.limit + 1}) e)) AS j`,
  );
  const rows = doc.rows ?? [];
  const items = rows.slice(0, query.limit);
  const last = items[items.length - 1];
  return {
    events: items.map((r) => r.e),
    next_cursor:
      rows.length > query.limit && last ? encodeCursor('events', [last.k, last.id, doc.snap], fh) : null,
    limit: query.limit,
  };
}

/** One event, with its prompt as stored (truncated at ingest) and its metadata. */
export async function getEvent(db: Db, id: string) {
  const doc = await queryJson<Record<string, unknown> | null>(
    db,
    sql`SELECT ${eventJson(true)} AS j FROM observability_events e WHERE e.id = ${id}::bigint`,
  );
  if (!doc) throw notFound('No event with this id.');
  return doc;
}

/** A session's calls in order (oldest first, keyset-paginated) and its totals. 404 when it has no event. */
export async function getSession(db: Db, sessionId: string, query: SessionQuery) {
  const fh = filterHash({ session_id: sessionId });
  const where: SQL[] = [sql`e.session_id = ${sessionId}`];
  if (query.cursor) {
    const [t, id] = decodeCursor(query.cursor, 'session', fh, [TS_RE, ID_RE]);
    where.push(sql`(e.event_time, e.id) > (${t}::timestamptz, ${id}::bigint)`);
  }
  const doc = await queryJson<{
    session: { calls: number };
    rows: { k: string; id: string; e: unknown }[] | null;
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
          'devices', (SELECT json_agg(DISTINCT jsonb_build_object('device_id', x.device_id::text,
              'serial_number', x.serial_number)) FROM (SELECT device_id, serial_number FROM observability_events
              WHERE session_id = ${sessionId} GROUP BY 1, 2 LIMIT 20) x),
          'agent_types', json_agg(DISTINCT e.agent_type), 'actors', json_agg(DISTINCT e.actor_email)
            FILTER (WHERE e.actor_email IS NOT NULL), 'models', json_agg(DISTINCT e.model)
            FILTER (WHERE e.model IS NOT NULL))
        FROM observability_events e WHERE e.session_id = ${sessionId}),
      'rows', (SELECT json_agg(json_build_object('k', ${isoUs(sql`e.event_time`)}, 'id', e.id::text,
          'e', ${eventJson(false)}) ORDER BY e.event_time, e.id)
        FROM (SELECT * FROM observability_events e WHERE ${and(where)} ORDER BY e.event_time, e.id
              LIMIT ${query.limit + 1}) e)) AS j`,
  );
  if (!doc.session || Number(doc.session.calls) === 0) throw notFound('No event carries this session id.');
  const rows = doc.rows ?? [];
  const items = rows.slice(0, query.limit);
  const last = items[items.length - 1];
  return {
    session: doc.session,
    events: items.map((r) => r.e),
    next_cursor: rows.length > query.limit && last ? encodeCursor('session', [last.k, last.id], fh) : null,
    limit: query.limit,
  };
}

// ---- summary ----

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

const MEASURES = `sum(calls)::bigint AS calls, sum(denied)::bigint AS denied, sum(errors)::bigint AS errors,
  sum(tokens_in)::bigint AS tokens_in, sum(tokens_out)::bigint AS tokens_out,
  sum(duration_sum)::bigint AS duration_sum, max(duration_max) AS duration_max`;
const HIST_SUMS = HIST_COLUMNS.map((c) => `coalesce(sum(${c}), 0)::bigint AS ${c}`).join(', ');
const measureJson = (t: string) =>
  `'calls', ${t}.calls, 'denied', ${t}.denied, 'errors', ${t}.errors, 'tokens_in', ${t}.tokens_in,
  'tokens_out', ${t}.tokens_out, 'duration_sum', ${t}.duration_sum, 'duration_max', ${t}.duration_max`;

/**
 * The small breakdowns of the summary come from one pass over the call rows (GROUPING SETS, hashed) instead of one
 * scan each (the series reads the rows of its bucket grain); `gid` tells the sets apart (bit set = column
 * aggregated away; rightmost column = bit 0).
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

function topSql(rel: string, keys: readonly string[], n: number, extra?: string): SQL {
  const k = keys.join(', ');
  const where = [...(extra ? [extra] : []), ...keys.map((key) => `${key} <> ''`)].join(' AND ');
  return sql.raw(`(SELECT coalesce(json_agg(json_build_object(${keys.map((key) => `'${key}', t.${key}`).join(', ')},
      ${measureJson('t')}) ORDER BY t.calls DESC, ${keys.map((x) => `t.${x}`).join(', ')}), '[]'::json)
    FROM (SELECT ${k}, ${MEASURES} FROM ${rel} WHERE ${where} GROUP BY ${k} ORDER BY calls DESC, ${k}
          LIMIT ${n}) t)`);
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

/**
 * The actor rows of a day-aligned range: weekly rows for the ISO weeks inside it, daily rows for the other days
 * (a 30-day range reads ~4 x 2,000 weekly + <= 12 x 2,000 daily rows instead of 30 x 2,000). The first condition
 * bounds the index range scan.
 */
function daysAndWeeks(r: { from: Date; to: Date }): SQL {
  const f = r.from.getTime();
  const t = r.to.getTime();
  const w1 = Math.ceil((f - MONDAY) / WEEK) * WEEK + MONDAY;
  const w2 = Math.floor((t - MONDAY) / WEEK) * WEEK + MONDAY;
  const [F, T, W1, W2] = [f, t, w1, w2].map((x) => tsParam(new Date(x)));
  return sql`bucket >= ${F} AND bucket < ${T} AND ((grain = 'week' AND bucket >= ${W1} AND bucket < ${W2})
    OR (grain = 'day' AND NOT (bucket >= ${W1} AND bucket < ${W2})))`;
}

/** A range widened to whole units of `grain` (at least one). */
function align(from: Date, to: Date, grain: Grain) {
  const step = STEP[grain];
  const f = floorTo(from.getTime(), step);
  const t = Math.max(ceilTo(to.getTime(), step), f + step);
  return { from: new Date(f), to: new Date(t) };
}

/**
 * Totals by result and event type, deny rate, top N tools / MCPs / agents / models / deny codes / rules / actors,
 * tokens per tool / MCP / actor / agent, duration p50 / p95 / p99 per tool and overall, and a time series of calls,
 * denies, errors and tokens at `bucket`, over `from`..`to` (default the last 24 hours) with the event filters.
 * The range is widened to whole buckets; the actor section to whole UTC days (actor rollups are daily).
 */
export async function observabilitySummary(db: Db, query: SummaryQuery, options: SummaryOptions = {}) {
  const now = options.now ?? new Date();
  const toIn = query.to ? new Date(query.to) : now;
  const fromIn = query.from ? new Date(query.from) : new Date(toIn.getTime() - DAY);
  const span = toIn.getTime() - fromIn.getTime();
  const bucket: Grain = query.bucket ?? (span <= 2 * DAY ? 'hour' : 'day');
  const range = align(fromIn, toIn, bucket);
  const actorRange = align(fromIn, toIn, 'day');
  const points = (range.to.getTime() - range.from.getTime()) / STEP[bucket];
  if (points > MAX_POINTS) {
    throw validationFailed(
      `query bucket: ${bucket} buckets over this range make ${points} points; at most ${MAX_POINTS} (choose a larger bucket or a shorter range)`,
    );
  }
  const used = usedFilters(query);
  const raw = options.source === 'raw';
  const callRollup = !raw && bucket !== 'minute' && used.every((k) => CALL_KEYS.includes(k as DimKey));
  const actorRollup = !raw && used.every((k) => ACTOR_ROW_KEYS.includes(k as DimKey));
  const F = tsParam(range.from);
  const T = tsParam(range.to);
  const events = (r: { from: Date; to: Date }) => sql`(SELECT * FROM observability_events e
    WHERE e.event_time >= ${tsParam(r.from)} AND e.event_time < ${tsParam(r.to)} AND ${and(eventConditions(query))})`;
  const callDims = and(dimConditions(query, CALL_KEYS));
  const unit = sql.raw(`'${bucket}'`);
  const callRel = callRollup
    ? sql`SELECT * FROM observability_rollups WHERE kind = 'call'
        AND ${rangeOf(range.from, range.to, 'hour').rollupWhere} AND ${callDims}`
    : rollupSelectSql(events(range), [bucket], []);
  const seriesRel = callRollup
    ? sql`SELECT date_trunc(${unit}, bucket AT TIME ZONE 'UTC') AS b, ${sql.raw(MEASURES)} FROM observability_rollups
        WHERE kind = 'call' AND grain = ${bucket} AND bucket >= ${F} AND bucket < ${T} AND ${callDims} GROUP BY 1`
    : sql`SELECT date_trunc(${unit}, bucket AT TIME ZONE 'UTC') AS b, ${sql.raw(MEASURES)} FROM c GROUP BY 1`;
  const actorRel = actorRollup
    ? sql`SELECT * FROM observability_rollups WHERE kind = 'actor' AND ${daysAndWeeks(actorRange)}
        AND ${and(dimConditions(query, ACTOR_ROW_KEYS))}`
    : rollupSelectSql(events(actorRange), [], ['day']);
  const n = query.top;
  const step = sql.raw(`'1 ${bucket}'::interval`);
  const doc = await queryJson<{
    totals: TopRow | null;
    tools: TopRow[];
    by_result: Record<string, number> | null;
    by_event_type: Record<string, number> | null;
    mcps: TopRow[];
    agents: TopRow[];
    models: TopRow[];
    actors: TopRow[];
    deny_codes: TopRow[];
    rules: TopRow[];
    series: Record<string, unknown>[];
  }>(
    db,
    sql`WITH c AS MATERIALIZED (${callRel}),
      a AS (${actorRel}),
      tg AS MATERIALIZED (SELECT mcp_name, tool, ${sql.raw(MEASURES)}, ${sql.raw(HIST_SUMS)} FROM c
        GROUP BY mcp_name, tool),
      tot AS (SELECT ${sql.raw(MEASURES)}, ${sql.raw(HIST_COLUMNS.map((h) => `sum(${h})::bigint AS ${h}`).join(', '))}
        FROM tg),
      tt AS (SELECT * FROM tg ORDER BY calls DESC, mcp_name, tool LIMIT ${n}),
      gs AS MATERIALIZED (SELECT GROUPING(${sql.raw(SET_COLUMNS.join(', '))}) AS gid, ${sql.raw(SET_COLUMNS.join(', '))},
          ${sql.raw(MEASURES)}
        FROM c GROUP BY GROUPING SETS (${sql.raw(SETS.map((set) => `(${set.join(', ')})`).join(', '))})),
      sr AS (${seriesRel})
    SELECT json_build_object(
      'totals', (SELECT json_build_object(${sql.raw(measureJson('tot'))},
          'hist', json_build_array(${sql.raw(HIST_COLUMNS.map((h) => `tot.${h}`).join(', '))})) FROM tot),
      'tools', (SELECT coalesce(json_agg(json_build_object('mcp_name', tt.mcp_name, 'tool', tt.tool,
          ${sql.raw(measureJson('tt'))}, 'hist', json_build_array(${sql.raw(HIST_COLUMNS.map((h) => `tt.${h}`).join(', '))}))
          ORDER BY tt.calls DESC, tt.mcp_name, tt.tool), '[]'::json) FROM tt),
      'by_result', (SELECT json_object_agg(result, calls) FROM gs WHERE gid = ${gid(['result'])}),
      'by_event_type', (SELECT json_object_agg(event_type, calls) FROM gs WHERE gid = ${gid(['event_type'])}),
      'mcps', ${topSql(setRel(['mcp_name']), ['mcp_name'], n)},
      'agents', ${topSql(setRel(['agent_type']), ['agent_type'], n)},
      'models', ${topSql(setRel(['model']), ['model'], n)},
      'deny_codes', ${topSql(setRel(['result', 'deny_code', 'rule_applied']), ['deny_code', 'rule_applied'], n, `result = 'denied'`)},
      'rules', ${topSql(setRel(['result', 'rule_applied']), ['rule_applied'], n, `result = 'denied'`)},
      'actors', ${topSql('a', ['actor_email'], n)},
      'series', (SELECT coalesce(json_agg(json_build_object(
          'bucket', to_char(g.b, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'calls', coalesce(s.calls, 0),
          'denied', coalesce(s.denied, 0), 'errors', coalesce(s.errors, 0), 'tokens_in', coalesce(s.tokens_in, 0),
          'tokens_out', coalesce(s.tokens_out, 0)) ORDER BY g.b), '[]'::json)
        FROM generate_series(${F} AT TIME ZONE 'UTC', ${T} AT TIME ZONE 'UTC' - '1 microsecond'::interval, ${step})
          AS g(b)
        LEFT JOIN sr s ON s.b = g.b)) AS j`,
  );
  const totals = (doc.totals ?? {}) as TopRow;
  const calls = num(totals.calls);
  const hist = (totals.hist ?? []).map(Number);
  const max = num(totals.duration_max);
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString(), bucket },
    actor_range: { from: actorRange.from.toISOString(), to: actorRange.to.toISOString() },
    source: { calls: callRollup ? 'rollups' : 'events', actors: actorRollup ? 'rollups' : 'events' },
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
    top: {
      tools: shapeTop(doc.tools, true),
      mcps: shapeTop(doc.mcps),
      agents: shapeTop(doc.agents),
      actors: shapeTop(doc.actors),
      models: shapeTop(doc.models),
      deny_codes: shapeTop(doc.deny_codes),
      rules: shapeTop(doc.rules),
    },
    series: doc.series.map((p) => ({
      bucket: String(p.bucket),
      calls: num(p.calls),
      denied: num(p.denied),
      errors: num(p.errors),
      tokens_in: num(p.tokens_in),
      tokens_out: num(p.tokens_out),
    })),
  };
}

const mapNumbers = (o: Record<string, unknown> | null): Record<string, number> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, num(v)]));

/** The values each filter can take in a range (default the last 7 days), with their call counts, for dropdowns. */
export async function observabilityFilters(db: Db, query: FiltersQuery, now = new Date()) {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 7 * DAY);
  const range = rangeOf(from, to, 'hour');
  const days = align(from, to, 'day');
  const lim = query.limit;
  const list = (rel: 'f' | 'fa', col: string): SQL =>
    sql`(SELECT json_build_object('values', coalesce(json_agg(json_build_object('value', v, 'calls', n)
        ORDER BY n DESC, v) FILTER (WHERE r <= ${lim}), '[]'::json), 'total', count(*)::int)
      FROM (SELECT v, n, row_number() OVER (ORDER BY n DESC, v) AS r FROM (
        SELECT ${sql.raw(col)} AS v, sum(calls)::bigint AS n FROM ${sql.raw(rel)} WHERE ${sql.raw(col)} <> ''
        GROUP BY 1) y) x)`;
  const doc = await queryJson<Record<string, unknown>>(
    db,
    sql`WITH f AS MATERIALIZED (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
          calls FROM observability_rollups WHERE kind = 'call' AND ${range.rollupWhere}),
      fa AS MATERIALIZED (SELECT actor_email, group_name, calls FROM observability_rollups
        WHERE kind = 'actor' AND grain = 'day' AND bucket >= ${tsParam(days.from)} AND bucket < ${tsParam(days.to)})
    SELECT json_build_object(
      'agent_type', ${list('f', 'agent_type')}, 'mcp', ${list('f', 'mcp_name')},
      'tool', ${list('f', 'tool')}, 'event_type', ${list('f', 'event_type')},
      'result', ${list('f', 'result')}, 'deny_code', ${list('f', 'deny_code')},
      'rule', ${list('f', 'rule_applied')}, 'model', ${list('f', 'model')},
      'actor', ${list('fa', 'actor_email')}, 'group', ${list('fa', 'group_name')}) AS j`,
  );
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString() },
    actor_range: { from: days.from.toISOString(), to: days.to.toISOString() },
    limit: lim,
    values: doc,
  };
}
