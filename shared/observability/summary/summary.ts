// Admin observability: the summary of the events of a range (totals, breakdowns, top lists, percentiles and
// a time series), read from the rollups (shared/observability/rollups/rollups.ts) wherever the filters allow, else from the events.
// Figures: `npm run bench:observability` (test/bench/observability.ts), recorded in docs/benchmarks.md.
//
// * The summary's range is widened to whole buckets (hours for bucket=minute and hour, days for day); its actor
//   section to whole UTC days. The response states both ranges and where each part came from (`source`). The call
//   rows of the range are summed per call key (~600 rows) and, separately, their sketches per top tool; totals, the
//   breakdowns (one hashed GROUPING SETS pass) and the top lists come from those. Filters on call-key columns stay on
//   the rollups; filters on device, serial, session, actor, group, skill or free text read the events of the range
//   (index range scans for device / serial / session / actor; the cost of the others grows with the range). The
//   series reads observability_series_totals with no filter (one row a bucket, its percentiles stored with it),
//   observability_series with only event type / result filters, the call rollups with other call-key filters (not
//   for minutes), else the events; the last three have the duration histogram per bucket, from which each point's
//   percentiles are read as the totals' are. The actor section stays on rollups when only actor / group filters are
//   used; with any other filter it is aggregated from the events of the range.
// * Every rollup path adds the read's tail (readTailOf: the events not folded yet, bounded), aggregated by the
//   same fragments the fold uses, to the rollup rows in the same statement: one round trip that writes nothing and
//   sees every event the fold has not reached, counted once.
// * A summary without filters over a day or two at minutes or hours (the console's default view) calls the summary
//   function (summaryFunctionSql), the same statement written into a plpgsql function, which keeps its plan for the
//   connection: a read pays neither parsing nor planning that statement. Otherwise the statement is built and
//   planned per read. The totals'
//   sketch, like the top tools', is returned as the stored sketches of the rows summed and merged in JavaScript.
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { SERIES_TOTALS_PERCENTILES } from '../../core/db/histogram.ts';
import { summed } from '../../core/db/int8-sum.ts';
import { intParam, textParam, tsParam } from '../../core/db/sql-values.ts';
import { invalidField } from '../../core/errors.ts';
import { type Bounded, boundedArray, LIST_BYTES, queryDoc } from '../bounds.ts';
import {
  ACTOR_ROW_KEYS,
  and,
  CALL_KEYS,
  type DimKey,
  dimConditions,
  eventConditions,
  lit,
  SERIES_KEYS,
  usedFilters,
} from '../conditions.ts';
import {
  type DurationSketch,
  mergedSketchRowsSql,
  mergeSketches,
  SKETCH_KEY_FUNCTION,
  sketchOfSql,
  sketchPercentiles,
} from '../duration-sketch.ts';
import {
  align,
  anyOf,
  COVER_GRAINS,
  DAY,
  STEP,
  segmentConditions,
  segments,
  segmentsWhere,
  slotBounds,
  slotConditions,
  TOTALS_GRAINS,
  totalsSegments,
} from '../ranges.ts';
import {
  actorRowsSql,
  CALL_KEY,
  callMeasuresSql,
  callRowsSql,
  type Grain,
  readTailOf,
  SERIES_MEASURES,
  seriesSelectSql,
} from '../rollups/rollups.ts';
import { type SummaryQuery, summaryQuery } from '../schemas.ts';

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
  /** The sketches of the rows the totals sum, as stored (merged in JavaScript). */
  sketches?: DurationSketch[] | null;
  [key: string]: unknown;
}

const MEASURE_LIST = ['calls', 'denied', 'errors', 'tokens_in', 'tokens_out', 'duration_sum'];
/** The measure columns of call rows, rollup rows and their sums (MEASURES reads them). */
const MEASURE_COLUMNS = `${MEASURE_LIST.join(', ')}, duration_max`;
/** The measures summed per group (obs_sum: every source's measure columns are bigint). */
const MEASURES = `${MEASURE_LIST.map(summed).join(', ')}, max(duration_max) AS duration_max`;
const KEY_COLUMNS = CALL_KEY.join(', ');
/** The columns of series rows, series totals rows and call rows that the series sums per bucket. */
const SERIES_COLUMNS = 'calls, denied, errors, tokens_in, tokens_out, duration_max, duration_sketch';
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

/**
 * A top-N list as a bounded array ({items, available}) of LIST_BYTES at most.
 *
 * Absent keys ('') are left out after grouping, behind an OFFSET 0 fence that keeps the planner from moving the
 * condition below the grouping: on the rollups `actor_email <> ''` is true of actor rows and false of nearly every
 * call row, a correlation the planner does not see, so it underestimated the actor rows and sorted them for a
 * GroupAggregate instead of hashing them.
 */
function topSql(rel: string, keys: readonly string[], n: string, extra?: string): SQL {
  return boundedArray(
    sql.raw(`SELECT json_build_object(${keys.map((key) => `'${key}', t.${key}`).join(', ')}, ${measureJson('t')}) AS o,
        row_number() OVER (ORDER BY t.calls DESC, ${keys.map((x) => `t.${x}`).join(', ')}) AS rn
      FROM (${topRowsSql(rel, keys, n, extra)}) t`),
    LIST_BYTES,
  );
}

/** The N rows of a top list: `rel` summed per `keys`, absent keys left out, by calls descending. */
function topRowsSql(rel: string, keys: readonly string[], n: string, extra?: string): string {
  const k = keys.join(', ');
  const present = keys.map((key) => `${key} <> ''`).join(' AND ');
  return `SELECT * FROM (SELECT ${k}, ${MEASURES} FROM ${rel}${extra ? ` WHERE ${extra}` : ''} GROUP BY ${k}
          OFFSET 0) g
        WHERE ${present} ORDER BY calls DESC, ${k} LIMIT ${n}`;
}

const num = (v: unknown): number => Number(v ?? 0);

/** A top list's rows as answered; with `sketchesOf` (the top tools), each row's percentiles from its sketches. */
function shapeTop(rows: TopRow[], sketchesOf?: (row: TopRow) => DurationSketch[]) {
  return rows.map((whole) => {
    const { duration_sum, duration_max, ...row } = whole;
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
    if (sketchesOf)
      Object.assign(out, percentileFields(percentiles(mergeSketches(sketchesOf(whole)), num(duration_max))));
    return out;
  });
}

const TOP_LISTS = ['tools', 'mcps', 'agents', 'actors', 'models', 'deny_codes', 'rules'] as const;

/**
 * Totals by result and event type, deny rate, top N tools / MCPs / agents / models / deny codes / rules / actors,
 * tokens per tool / MCP / actor / agent, duration p50 / p95 / p99 per tool and overall, and a time series of calls,
 * denies, errors, tokens and duration p50 / p95 / p99 at `bucket`, over `from`..`to` (default the last 24 hours) with the event filters.
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
  // parts=totals: the totals alone; no top tool, top list, actor or series part is in the statement.
  const full = query.parts !== 'totals';
  const raw = options.source === 'raw';
  const shape = statementShape(query, bucket, raw);
  const finest = bucket === 'day' ? 'day' : 'hour';
  const callSegments = segments(range.from.getTime(), range.to.getTime(), finest);
  const totalsSegs = totalsSegments(range.from.getTime(), range.to.getTime(), finest);
  const actorSegments = segments(actorRange.from.getTime(), actorRange.to.getTime(), 'day');
  // Without filters, over a few days at minutes or hours, the statement is the summary function's (SUMMARY_FUNCTION),
  // planned once per connection.
  const statement =
    !raw &&
    full &&
    used.length === 0 &&
    bucket !== 'day' &&
    actorRange.to.getTime() - actorRange.from.getTime() <= SUMMARY_FUNCTION_DAYS * DAY
      ? sql`SELECT ${sql.raw(SUMMARY_FUNCTION)}(${textParam(bucket)}, ${tsParam(range.from)}, ${tsParam(range.to)},
          ${tsParam(actorRange.from)}, ${tsParam(actorRange.to)}, ${intParam(query.top)},
          ${`{${[
            ...slotBounds(callSegments, COVER_GRAINS[finest]),
            ...slotBounds(totalsSegs, TOTALS_GRAINS[finest]),
            ...slotBounds(actorSegments, COVER_GRAINS.day),
          ]
            .map((t) => new Date(t).toISOString())
            .join(',')}}`}::timestamptz[]) AS j`
      : summaryStatement(query, shape, {
          from: tsParam(range.from),
          to: tsParam(range.to),
          actorFrom: tsParam(actorRange.from),
          actorTo: tsParam(actorRange.to),
          callBuckets: segmentsWhere(callSegments),
          totalsBuckets: segmentsWhere(totalsSegs),
          actorBuckets: segmentConditions(actorSegments),
          top: String(query.top),
        });
  const doc = await queryDoc<SummaryDoc>(db, statement);
  const totals = (doc.totals ?? {}) as TopRow;
  const sketchesByTool = new Map(
    (doc.tool_sketches ?? []).map(([mcp, tool, sketches]) => [JSON.stringify([mcp, tool]), sketches ?? []]),
  );
  const sketchesOf = (row: TopRow) => sketchesByTool.get(JSON.stringify([row.mcp_name, row.tool])) ?? [];
  const calls = num(totals.calls);
  const max = num(totals.duration_max);
  const top = Object.fromEntries(
    TOP_LISTS.map((name) => [
      name,
      shapeTop(doc[name]?.items ?? [], name === 'tools' ? sketchesOf : undefined),
    ]),
  ) as Record<(typeof TOP_LISTS)[number], Record<string, unknown>[]>;
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString(), bucket },
    actor_range: { from: actorRange.from.toISOString(), to: actorRange.to.toISOString() },
    source: {
      calls: shape.callRollup ? 'rollups' : 'events',
      series: full ? shape.seriesSource : 'none',
      actors: full ? (shape.actorRollup ? 'rollups' : 'events') : 'none',
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
      ...percentileFields(percentiles(mergeSketches(totals.sketches ?? []), max)),
      duration_max_ms: max,
    },
    top,
    // Top lists the byte bound (LIST_BYTES each) cut below `top` entries: only with very long names.
    top_truncated: TOP_LISTS.filter((name) => (doc[name]?.items.length ?? 0) < (doc[name]?.available ?? 0)),
    series: full ? seriesPoints(doc.series, range, STEP[bucket]) : [],
  };
}

type SummaryDoc = {
  totals: TopRow | null;
  by_result: Record<string, number> | null;
  by_event_type: Record<string, number> | null;
  series: SeriesRow[] | null;
  /** Per top tool: its MCP server, its name and its rows' sketches as stored (kept out of the byte-bounded list). */
  tool_sketches?: [string, string, DurationSketch[] | null][] | null;
} & Partial<Record<(typeof TOP_LISTS)[number], Bounded<TopRow>>>;

/** Which sources a summary reads (from its filters) and which parts it has. */
function statementShape(query: SummaryQuery, bucket: Grain, raw: boolean) {
  const used = usedFilters(query);
  const only = (keys: readonly DimKey[]) => !raw && used.every((k) => keys.includes(k as DimKey));
  const callRollup = only(CALL_KEYS);
  const seriesSource: 'series' | 'rollups' | 'events' = only(SERIES_KEYS)
    ? 'series'
    : callRollup && bucket !== 'minute'
      ? 'rollups'
      : 'events';
  // parts=totals: the totals alone; no top tool, top list, actor or series part is in the statement.
  const full = query.parts !== 'totals';
  return { bucket, used, full, callRollup, seriesSource, actorRollup: only(ACTOR_ROW_KEYS), only };
}

/**
 * What the summary's statement reads, as SQL: the values a read binds, or the summary function's arguments (the
 * statement is then the function's body). The buckets are conditions on grain and bucket selecting the rows covering
 * the range (call and tool rows), the range in whole days and hours (series totals) and the actor range (actor rows).
 */
interface StatementInputs {
  from: SQL;
  to: SQL;
  actorFrom: SQL;
  actorTo: SQL;
  callBuckets: SQL;
  totalsBuckets: SQL;
  /** One condition per segment or slot: the actor rows are read by one index-only range scan each. */
  actorBuckets: SQL[];
  /** The length of the top lists: a number, or the function's argument. */
  top: string;
}

/** The summary's statement: one row, one json column `j` (SummaryDoc). */
function summaryStatement(
  query: SummaryQuery,
  shape: ReturnType<typeof statementShape>,
  p: StatementInputs,
): SQL {
  const { bucket, used, full, callRollup, seriesSource, actorRollup, only } = shape;
  const F = p.from;
  const T = p.to;
  const events = (from: SQL, to: SQL) => sql`(SELECT * FROM observability_events e
    WHERE e.event_time >= ${from} AND e.event_time < ${to} AND ${and(eventConditions(query))})`;
  // The rollup paths add to the rollup rows the read's tail (readTailOf), the events not folded yet, with the
  // filters (on the rollup paths, only filters the tail's columns hold): ue, over the actor range (which holds the
  // range), read once; tail, those of the range.
  const tailCte = sql`ue AS MATERIALIZED (SELECT * FROM ${readTailOf(p.actorFrom, p.actorTo)} e
    WHERE ${and(dimConditions(query, [...CALL_KEYS, ...ACTOR_ROW_KEYS], 'e.'))})`;
  const tail = sql`(SELECT * FROM ue WHERE event_time >= ${F} AND event_time < ${T})`;
  const callDims = and(dimConditions(query, CALL_KEYS));
  // Per call key over the range: calls, denied, errors, tokens, duration sum / max and the histogram.
  // The call rows of the range: the rollup rows of its buckets, or the events aggregated per call key (measures and
  // histogram). The rollup path reads them twice (measures per key, histograms per tool), cheaper than keeping
  // thousands of 80-column rows in a CTE; the raw path computes them once (~hundreds of rows) and keeps them.
  const rowsWhere = (kind: 'call' | 'tool') => sql`kind = ${lit(kind)}
    AND ${p.callBuckets}
    AND ${callDims}`;
  const callWhere = rowsWhere('call');
  // Tool rows (call rows summed per tool) serve the sketches when no filter is on another column of the call key.
  const sketchRows = only(TOOL_FILTERS) ? 'tool' : 'call';
  // The rollup path adds the call rows of the unfolded events (tl, a few hundred rows at most) to the rollup rows.
  // Sketches are merged per tool only for the top tools (tt, ranked as the top list ranks them), from their tool rows
  // where the filters allow: merging unnests every row's sketch, so its cost follows the rows merged. The totals'
  // sketch comes, without filters, from the series totals (one row a day or hour, folded with the call rows) and the
  // tail's call rows, else from the tool rows or every call row.
  // Each top tool is numbered (rn): the merge groups its pairs by that integer, not by the tool's two names.
  const topTools = sql`tt AS MATERIALIZED (SELECT ${sql.raw(TOOL_KEYS.join(', '))},
      row_number() OVER (ORDER BY calls DESC, ${sql.raw(TOOL_KEYS.join(', '))})::integer AS rn
    FROM (${sql.raw(topRowsSql('k', TOOL_KEYS, p.top))}) t)`;
  const ofTopTools = (rows: string) => sql.raw(`${rows} x JOIN tt USING (${TOOL_KEYS.join(', ')})`);
  const rangeTotals = p.totalsBuckets;
  const toolCtes = (rows: SQL) =>
    full ? sql`${topTools}, th AS MATERIALIZED (${toolSketches(rows)}),` : sql``;
  // The tail's sketches: only the totals' and the top tools' are read, so its events are counted per tool and sketch
  // key once (tk), not sketched per call key.
  const tailSketch = (rows: string, groups: string) =>
    sql.raw(`SELECT ${groups ? `${groups}, ` : ''}${sketchOfSql('x.b', 'x.n', false)} AS duration_sketch
      FROM ${rows}${groups ? ` GROUP BY ${groups}` : ''}`);
  const callCtes = callRollup
    ? sql`tl AS MATERIALIZED (${callMeasuresSql(tail)}),
        tk AS MATERIALIZED (SELECT s.mcp_name, s.tool, ${sql.raw(SKETCH_KEY_FUNCTION)}(s.duration_ms) AS b,
            count(*)::bigint AS n
          FROM ${tail} AS s GROUP BY 1, 2, 3),
        k AS MATERIALIZED (SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURES)}
          FROM (SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURE_COLUMNS)} FROM observability_rollups WHERE ${callWhere}
            UNION ALL SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURE_COLUMNS)} FROM tl) u
          GROUP BY ${sql.raw(KEY_COLUMNS)}),
        ${toolCtes(sql`(SELECT tt.rn, x.duration_sketch FROM ${ofTopTools('observability_rollups')}
            WHERE ${rowsWhere(sketchRows)}
          UNION ALL ${tailSketch(`tk x JOIN tt USING (${TOOL_KEYS.join(', ')})`, 'tt.rn')})`)}
        ts AS (${totalSketch(
          sql`(SELECT duration_sketch FROM ${
            used.length === 0
              ? sql`observability_series_totals WHERE ${rangeTotals}`
              : sql`observability_rollups WHERE ${rowsWhere(sketchRows)}`
          }
            UNION ALL ${tailSketch('(SELECT b, sum(n) AS n FROM tk GROUP BY b) x', '')})`,
        )})`
    : sql`r AS MATERIALIZED (${callRowsSql(events(F, T))}),
        k AS MATERIALIZED (SELECT ${sql.raw(KEY_COLUMNS)}, ${sql.raw(MEASURES)} FROM r GROUP BY ${sql.raw(KEY_COLUMNS)}),
        ${toolCtes(sql`(SELECT tt.rn, x.duration_sketch FROM ${ofTopTools('r')})`)}
        ts AS (${totalSketch(sql`r`)})`;
  const unit = lit(bucket);
  const seriesMeasures = sql.raw(SERIES_MEASURES.sums.map(summed).join(', '));
  // Per bucket, the measures, the longest duration (dmax) and the merged sketch, from which seriesPoints reads the
  // percentiles as the totals' are read (sketchPercentiles).
  const seriesOf = (rows: SQL) =>
    sql`SELECT z.bucket AS b, z.calls, z.denied, z.errors, z.tokens_in, z.tokens_out, z.duration_max AS dmax,
        z.duration_sketch AS sketch, NULL::json AS pct
      FROM (${mergedSketchRowsSql({ from: sql`${rows} AS r`, groups: [['r.bucket', 'bucket']], ...SERIES_MEASURES, ordered: false })}) z`;
  // Per bucket: the measures, and either the longest duration and the histogram (`dmax`, `hist`) or, from the
  // totals, the percentiles stored with them (`pct`).
  // Each rollup source adds the rows of the unfolded events at the same grain (st: series rows, or call rows).
  const seriesRel =
    seriesSource === 'series' && used.length === 0
      ? // Buckets without unfolded events read their stored percentiles; the others merge their stored row and the
        // tail's, and their percentiles are read from the merged sketch.
        sql`SELECT bucket AS b, calls, denied, errors, tokens_in, tokens_out, NULL::int AS dmax, NULL::integer[] AS sketch,
            to_json(duration_percentiles) AS pct
          FROM observability_series_totals WHERE grain = ${unit} AND bucket >= ${F} AND bucket < ${T}
            AND bucket <> ALL (ARRAY(SELECT bucket FROM st))
        UNION ALL ${seriesOf(sql`(SELECT bucket, ${sql.raw(SERIES_COLUMNS)} FROM observability_series_totals
              WHERE grain = ${unit} AND bucket = ANY (ARRAY(SELECT bucket FROM st))
            UNION ALL SELECT bucket, ${sql.raw(SERIES_COLUMNS)} FROM st)`)}`
      : seriesSource === 'series'
        ? seriesOf(sql`(SELECT bucket, ${sql.raw(SERIES_COLUMNS)} FROM observability_series
              WHERE grain = ${unit} AND bucket >= ${F} AND bucket < ${T} AND ${and(dimConditions(query, SERIES_KEYS))}
            UNION ALL SELECT bucket, ${sql.raw(SERIES_COLUMNS)} FROM st)`)
        : seriesSource === 'rollups'
          ? seriesOf(sql`(SELECT bucket AT TIME ZONE 'UTC' AS bucket, ${sql.raw(SERIES_COLUMNS)} FROM observability_rollups
                WHERE kind = 'call' AND grain = ${unit} AND bucket >= ${F} AND bucket < ${T} AND ${callDims}
              UNION ALL SELECT bucket AT TIME ZONE 'UTC', ${sql.raw(SERIES_COLUMNS)}
                FROM (${callRowsSql(tail, [bucket])}) c)`)
          : sql`SELECT b, ${seriesMeasures}, max(duration_max) AS dmax,
              ${sql.raw(sketchOfSql('hb', 'calls', false))} AS sketch, NULL::json AS pct
            FROM (SELECT date_trunc(${unit}, e.event_time AT TIME ZONE 'UTC') AS b,
                ${sql.raw(SKETCH_KEY_FUNCTION)}(e.duration_ms) AS hb, count(*)::bigint AS calls,
                count(*) FILTER (WHERE e.result = 'denied') AS denied,
                count(*) FILTER (WHERE e.result = 'error') AS errors, sum(e.tokens_in)::bigint AS tokens_in,
                sum(e.tokens_out)::bigint AS tokens_out, max(e.duration_ms) AS duration_max
              FROM ${events(F, T)} e GROUP BY 1, 2) x
            GROUP BY 1`;
  // Actor rows, not yet summed (the top list sums them once). One SELECT per segment: each is an index-only range
  // scan of observability_rollups_actor_grain_idx, which holds the measures (an OR of them could only be a bitmap scan
  // of the wide rollup rows).
  const actorRel = actorRollup
    ? sql`${sql.join(
        p.actorBuckets.map(
          (bucket) => sql`SELECT actor_email, ${sql.raw(MEASURE_COLUMNS)} FROM observability_rollups
            WHERE kind = 'actor' AND ${bucket} AND ${and(dimConditions(query, ACTOR_ROW_KEYS))}`,
        ),
        sql` UNION ALL `,
      )}
        UNION ALL SELECT actor_email, ${sql.raw(MEASURE_COLUMNS)}
          FROM (${actorRowsSql(sql`ue`, ['day'])}) t`
    : sql`SELECT coalesce(e.actor_email, '') AS actor_email, count(*)::bigint AS calls,
          count(*) FILTER (WHERE e.result = 'denied') AS denied, count(*) FILTER (WHERE e.result = 'error') AS errors,
          sum(e.tokens_in)::bigint AS tokens_in, sum(e.tokens_out)::bigint AS tokens_out,
          sum(e.duration_ms)::bigint AS duration_sum, max(e.duration_ms) AS duration_max
        FROM ${events(p.actorFrom, p.actorTo)} e GROUP BY 1`;
  const n = p.top;
  return sql`WITH ${tailCte}, ${callCtes},${full && seriesSource === 'series' ? sql` st AS MATERIALIZED (${seriesSelectSql(tail, [bucket])}),` : sql``}
      ${full ? sql`a AS (${actorRel}),` : sql``}
      tot AS (SELECT * FROM (SELECT ${sql.raw(MEASURES)} FROM k) m, ts),
      gs AS MATERIALIZED (SELECT GROUPING(${sql.raw(SET_COLUMNS.join(', '))}) AS gid, ${sql.raw(SET_COLUMNS.join(', '))},
          ${sql.raw(MEASURES)}
        FROM k GROUP BY GROUPING SETS (${sql.raw(SETS.map((set) => `(${set.join(', ')})`).join(', '))}))
      ${full ? sql`, sr AS (${seriesRel})` : sql``}
    SELECT json_build_object(
      'totals', (SELECT json_build_object(${sql.raw(measureJson('tot'))},
          'sketches', tot.sketches) FROM tot),
      'by_result', (SELECT json_object_agg(result, calls) FROM gs WHERE gid = ${sql.raw(String(gid(['result'])))}),
      'by_event_type', (SELECT json_object_agg(event_type, calls) FROM gs WHERE gid = ${sql.raw(String(gid(['event_type'])))})
      ${
        full
          ? sql`, 'tools', ${topSql('k', TOOL_KEYS, n)},
      'tool_sketches', (SELECT json_agg(json_build_array(th.mcp_name, th.tool, th.sketches)) FROM th),
      'mcps', ${topSql(setRel(['mcp_name']), ['mcp_name'], n)},
      'agents', ${topSql(setRel(['agent_type']), ['agent_type'], n)},
      'models', ${topSql(setRel(['model']), ['model'], n)},
      'deny_codes', ${topSql(setRel(['result', 'deny_code', 'rule_applied']), ['deny_code', 'rule_applied'], n, `result = 'denied'`)},
      'rules', ${topSql(setRel(['result', 'rule_applied']), ['rule_applied'], n, `result = 'denied'`)},
      'actors', ${topSql('a', ['actor_email'], n)},
      'series', (SELECT json_agg(json_build_array(extract(epoch FROM s.b)::bigint, s.calls, s.denied, s.errors,
          s.tokens_in, s.tokens_out, s.dmax, s.sketch, s.pct) ORDER BY s.b) FROM sr s)`
          : sql``
      }) AS j`;
}

/** Name of the summary function (summaryFunctionSql): the statement of a summary without filters. */
export const SUMMARY_FUNCTION = 'observability_summary';
/** The longest actor range (whole UTC days) the summary function serves. */
const SUMMARY_FUNCTION_DAYS = 3;

/**
 * CREATE OR REPLACE FUNCTION observability_summary(grain, from, to, actor from, actor to, top, bounds): the
 * statement of a summary without filters over at most SUMMARY_FUNCTION_DAYS of actor rows (summaryStatement), one per
 * series grain (minute, hour), its inputs the function's arguments: the range's bounds as slots (slotConditions), so
 * that the text is the same for every range. A plpgsql function keeps each statement's plan for the connection (a
 * generic plan, as plan_cache_mode says), so a read pays neither its parsing nor its planning; the Data API cannot
 * keep prepared statements, a function works on every driver. A generic plan does not know the range: it expects
 * few rows of each bucket, right for a day or two, but it grouped the tens of thousands of actor rows of a month by
 * sorting them, so longer ranges are planned per read. STABLE: it runs in the calling statement's snapshot, tail
 * and rollups alike, and writes nothing.
 * Generated into a migration (scripts/function-migrations.ts).
 */
export function summaryFunctionSql(): SQL {
  const query = summaryQuery.parse({});
  const branch = (bucket: 'minute' | 'hour'): SQL => {
    let first = 1;
    const slots = (
      grains:
        | (typeof COVER_GRAINS)[keyof typeof COVER_GRAINS]
        | (typeof TOTALS_GRAINS)[keyof typeof TOTALS_GRAINS],
    ) => {
      const each = slotConditions(grains, 'p_bounds', first);
      first += grains.length * 4;
      return each;
    };
    return summaryStatement(query, statementShape(query, bucket, false), {
      from: sql.raw('p_from'),
      to: sql.raw('p_to'),
      actorFrom: sql.raw('p_actor_from'),
      actorTo: sql.raw('p_actor_to'),
      callBuckets: anyOf(slots(COVER_GRAINS.hour)),
      totalsBuckets: anyOf(slots(TOTALS_GRAINS.hour)),
      actorBuckets: slots(COVER_GRAINS.day),
      top: 'p_top',
    });
  };
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(SUMMARY_FUNCTION)}(p_grain text, p_from timestamptz, p_to timestamptz,
  p_actor_from timestamptz, p_actor_to timestamptz, p_top integer, p_bounds timestamptz[])
RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET plan_cache_mode = force_generic_plan
AS $summary$
BEGIN
  IF p_grain = 'minute' THEN
    RETURN (${branch('minute')});
  END IF;
  RETURN (${branch('hour')});
END
$summary$`;
}

/**
 * A non-empty bucket as the database returns it: [start in epoch seconds, calls, denied, errors, tokens in, out,
 * longest duration, sketch, [p50, p95, p99]]: the sketch, or from observability_series_totals the percentiles stored
 * with the row (then the duration and sketch are null).
 */
type SeriesRow = [
  number,
  number,
  number,
  number,
  number,
  number,
  number | null,
  DurationSketch,
  Percentiles | null,
];

/**
 * Every bucket of the range, in order, zero where the database returned none (cheaper than 1,500 JSON objects), with
 * the duration percentiles of its events (null without calls), as the totals' are computed.
 */
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
      ...percentileFields(r?.[8] ?? percentiles(r?.[7] ?? null, num(r?.[6]))),
    });
  }
  return points;
}

type Percentiles = readonly [number | null, number | null, number | null];

/** p50, p95 and p99 of a sketch capped by its longest duration (sketchPercentiles), as the totals keep them. */
const percentiles = (sketch: DurationSketch, max: number): Percentiles => {
  const [p50 = null, p95 = null, p99 = null] = sketchPercentiles(sketch, SERIES_TOTALS_PERCENTILES, max);
  return [p50, p95, p99];
};

const TOOL_KEYS = ['mcp_name', 'tool'];
/** The filters tool rows hold. */
const TOOL_FILTERS: readonly DimKey[] = ['mcp', 'tool'];

/**
 * The sketches of `rows` (a relation with duration_sketch) as stored, in one json array (`sketches`), merged in
 * JavaScript (mergeSketches) as the top tools' are: a few dozen rows without filters (the series totals' days and
 * hours, and the tail's call rows), where unnesting and summing their pairs in the statement cost more.
 */
const totalSketch = (rows: SQL): SQL =>
  sql`SELECT json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches FROM ${rows} AS r`;

/**
 * Per top tool of `rows` (a relation with rn, the tool's number in tt, and duration_sketch), its rows' sketches as
 * stored, merged in JavaScript (mergeSketches): a few hundred rows' sketches cost less to send than to unnest into
 * (key, count) pairs and sum per tool in the statement.
 */
const toolSketches = (rows: SQL): SQL =>
  sql`SELECT tt.mcp_name, tt.tool, m.sketches
    FROM (SELECT r.rn, json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches
      FROM ${rows} AS r GROUP BY r.rn) m JOIN tt USING (rn)`;

const percentileFields = ([p50, p95, p99]: Percentiles) => ({
  duration_p50_ms: p50,
  duration_p95_ms: p95,
  duration_p99_ms: p99,
});

const mapNumbers = (o: Record<string, unknown> | null): Record<string, number> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, num(v)]));
