// The rollups of observability_events (tables observability_rollups, migrations/0002_observability.sql, and
// observability_series, migrations/0003_observability_series.sql): SQL fragments that aggregate any relation with
// the event columns into rollup rows. The fold (observability_fold(), below) upserts the aggregate of the events
// stored since the last fold; the summary's raw path (shared/observability/summary/summary.ts) computes the very same
// aggregate from the events table, so both paths read alike and a property test can compare them.
//
// DESIGN (figures: `npm run bench:observability`, test/bench/observability.ts; recorded in docs/benchmarks.md)
//
// * Rollups folded from the stored events. The ingest statement (shared/devices/events.ts) stores events only, each
//   stamped with its transaction (ingest_xid); observability_fold() (below) upserts the aggregates of the events of
//   every finished transaction since its watermark, exactly once each. The schedule (observability/fold) calls it
//   and keeps the backlog small; reads never do: each adds the aggregate of the events not folded yet (the tail,
//   readTailOf) to the rollup rows in the same statement, so a read is one round trip, writes nothing and is as fresh
//   as when ingest wrote the rollups itself. A fold upserts each row once for all batches since the last, where
//   ingest would upsert it once per batch. Only the
//   finest grain (hourly calls, daily actors, minute series) is grouped from the events; the coarser rows are summed
//   from those rows (buckets nest):
//   - observability_rollups kind 'call', hourly, 6-hourly, daily and weekly (ISO), keyed by (agent, MCP, tool, event
//     type, result, deny code, rule, model): calls, denied, errors, tokens in / out, duration sum / max and a
//     sketch of the durations (duration_sketch, duration-sketch.ts: log buckets stored sparse, percentiles within
//     2 % of percentile_cont's).
//     Their count is the number of distinct keys per bucket, not of events (the benchmark fleet: ~230 a bucket). A
//     range reads the coarsest rows that fit in it (shared/observability/ranges.ts). No index INCLUDEs a
//     measure, so upserts are HOT updates (fillfactor 80) and the rows of a bucket stay on the pages where they were
//     created.
//   - observability_rollups kind 'tool', at the same grains: the call rows of a bucket summed per (MCP, tool), so
//     that the summary's per-tool percentiles merge a few sketches per tool, not one per call key.
//   - observability_rollups kind 'actor', daily and weekly, keyed by (actor, group). Not hourly and not crossed with
//     the call key: actor x tool x hour rows would be as many as the events.
//   - observability_series, per minute, hour and day, keyed by (event type, result): the time series, with the
//     longest duration and the same duration sketch as the call rows (per-bucket percentiles of the series).
//     Minute rows exist only here (about 4 a minute, kept like the rollups).
//   - observability_series_totals, per minute, hour and day: the series rows of a bucket summed over event types
//     and results, with the bucket's p50 / p95 / p99 stored in a generated column (obs_sketch_percentiles, the SQL
//     twin of sketchPercentiles). The unfiltered series reads one row and three percentiles per bucket instead of
//     merging the sketches of ~7,000 rows for a 24-hour minute series.
// * Who reads them, each with the tail: the summary (observability-summary.ts), the filter values
//   (shared/observability/summary/filter-values.ts) and the fleet views (fleet.ts). The event browser reads the events (shared/observability/events/events.ts).
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows } from '../../core/db/query.ts';
import { lit } from '../conditions.ts';
import {
  mergedSketchRowsSql,
  SKETCH_ADD_FUNCTION,
  SKETCH_KEY_FUNCTION,
  sketchOfSql,
} from '../duration-sketch.ts';

/** Bucket sizes: minutes (series only), hours, quarter days of 6 hours (call rollups only), UTC days, ISO weeks. */
export type Grain = 'minute' | 'hour' | '6h' | 'day' | 'week';
/** The grains of the call rollups, finest first. */
export const CALL_GRAINS: readonly Grain[] = ['hour', '6h', 'day', 'week'];

const WATERMARK = '(SELECT next_xid FROM observability_fold_state)';
// An array expression (the cast), not a subquery: ANY (SELECT …) would compare with the array itself.
const PENDING = '(SELECT pending_xids FROM observability_fold_state)::xid8[]';

/**
 * The condition on the events `e` that the rollups and series do not hold yet (the tail): stored at or after the
 * fold's watermark, or passed by a fold while their transaction was running (pending_xids).
 */
export const unfoldedSql = (e: 'e'): SQL =>
  sql.raw(`(${e}.ingest_xid >= ${WATERMARK} OR ${e}.ingest_xid = ANY (${PENDING}))`);

/**
 * The most events of the tail a read adds to the rollups (readTailOf): as many as a read folded before it answered
 * when reads folded, so reads are as fresh as then; the schedule keeps the tail below it (a 10,000-laptop fleet
 * stores ~2,100 events a minute), and a larger backlog costs a read no more than this.
 */
export const READ_TAIL_MAX_EVENTS = 5_000;

/**
 * The tail as a read sees it: the events the pending transactions stored, and those of the transactions from the
 * watermark on, up to the one holding the READ_TAIL_MAX_EVENTS-th event (whole transactions, as a fold cuts).
 */
const readTailSql = (e: 'e'): SQL =>
  sql.raw(`((${e}.ingest_xid >= ${WATERMARK} AND ${e}.ingest_xid < coalesce((SELECT x.ingest_xid
      FROM observability_events x WHERE x.ingest_xid >= ${WATERMARK} ORDER BY x.ingest_xid
      OFFSET ${READ_TAIL_MAX_EVENTS} LIMIT 1), '18446744073709551615'::xid8))
    OR ${e}.ingest_xid = ANY (${PENDING}))`);

/** Name of the SQL function that returns the events of the read's tail (readTailFunctionSql). */
export const READ_TAIL_FUNCTION = 'observability_read_tail';

/**
 * CREATE OR REPLACE FUNCTION observability_read_tail(): the events of the read's tail (readTailSql), with the columns
 * the rollup fragments read; the reader keeps those of its range. A read adds their aggregate to the rollup rows in
 * the same statement. STABLE, so it runs in that statement's snapshot, which sees the watermark and the rows of the
 * same folds: each event the read counts is counted once, and the read writes nothing. A function so that its plan,
 * probes of the ingest_xid index of every partition of the events, is made once per connection, not by every read.
 * No time range inside: in a plan made once, a range given as parameters is estimated to select little and led the
 * planner to intersect the tail with every event of the range by the time index. Generated into a migration like
 * the fold (scripts/function-migrations.ts).
 */
export function readTailFunctionSql(): SQL {
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(READ_TAIL_FUNCTION)}()
RETURNS TABLE (event_time timestamptz, agent_type text, mcp_name text, tool text, event_type text, result text,
  deny_code text, rule_applied text, model text, actor_email text, group_name text, tokens_in integer,
  tokens_out integer, duration_ms integer)
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $tail$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT e.event_time, e.agent_type, e.mcp_name, e.tool, e.event_type, e.result, e.deny_code,
      e.rule_applied, e.model, e.actor_email, e.group_name, e.tokens_in, e.tokens_out, e.duration_ms
    FROM observability_events e WHERE ${readTailSql('e')};
END
$tail$`;
}

/** The events of [from, to) in the read's tail (observability_read_tail), as a relation with its columns. */
export const readTailOf = (from: SQL, to: SQL): SQL =>
  sql`(SELECT * FROM ${sql.raw(READ_TAIL_FUNCTION)}() t WHERE t.event_time >= ${from} AND t.event_time < ${to})`;

/** The call key of the rollups: absent values are ''. */
export const CALL_KEY = [
  'agent_type',
  'mcp_name',
  'tool',
  'event_type',
  'result',
  'deny_code',
  'rule_applied',
  'model',
] as const;

/**
 * The call rows of a range with their key, calls and tokens: the rollup rows `rollupWhere` selects and, one row each,
 * the events of [from, to) in the read's tail (readTailOf); `rollupWhere` must select the rows covering [from, to).
 */
export const callCountsSql = (rollupWhere: SQL, from: SQL, to: SQL): SQL =>
  sql`(SELECT ${sql.raw(CALL_KEY.join(', '))}, calls, tokens_in, tokens_out FROM observability_rollups
      WHERE kind = 'call' AND ${rollupWhere}
    UNION ALL SELECT s.agent_type, s.mcp_name, s.tool, s.event_type, s.result, coalesce(s.deny_code, ''),
      coalesce(s.rule_applied, ''), coalesce(s.model, ''), 1::bigint, s.tokens_in::bigint, s.tokens_out::bigint
    FROM ${readTailOf(from, to)} s)`;

/** The UTC bucket of `grain` holding the timestamptz `expr` (ISO weeks start on Monday; 6h at 00, 06, 12, 18). */
export const bucketOf = (grain: SQL, expr: SQL): SQL =>
  sql`(CASE WHEN ${grain} = '6h' THEN date_trunc('day', ${expr} AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM ${expr} AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(${grain}, ${expr} AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC'`;

const grains = (list: readonly Grain[]): SQL =>
  sql.raw(`(VALUES ${list.map((g) => `('${g}')`).join(', ')}) AS g(grain)`);

// The sketch of rows x grouped by sketch key b (one count n each).
const SKETCH_PIVOT = sql.raw(`${sketchOfSql('x.b', 'x.n')} AS duration_sketch`);
const KEYS = sql.raw(CALL_KEY.map((k) => `x.${k}`).join(', '));

/**
 * Call rows of `source` (a relation with the event columns): per call key, and per bucket of each grain in
 * `grainList` (none: over the whole source, grain and bucket NULL), the calls, denied, errors, tokens in / out,
 * duration sum / max and the duration sketch. Two steps: group by key and sketch key (one count per event), then
 * aggregate the few resulting rows into the sketch. Columns: grain, bucket, the call key, calls, denied, errors,
 * tokens_in, tokens_out, duration_sum, duration_max, duration_sketch.
 */
export function callRowsSql(source: SQL, grainList: readonly Grain[] = []): SQL {
  const grain = grainList.length ? sql`g.grain` : sql`NULL::text`;
  const bucket = grainList.length ? bucketOf(sql`g.grain`, sql`s.event_time`) : sql`NULL::timestamptz`;
  const join = grainList.length ? sql`CROSS JOIN ${grains(grainList)}` : sql``;
  return sql`SELECT x.grain, x.bucket, ${KEYS}, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, sum(x.ds)::bigint AS duration_sum,
      max(x.dm)::int AS duration_max, ${SKETCH_PIVOT}
    FROM (SELECT ${grain} AS grain, ${bucket} AS bucket, s.agent_type, s.mcp_name, s.tool, s.event_type, s.result,
        coalesce(s.deny_code, '') AS deny_code, coalesce(s.rule_applied, '') AS rule_applied,
        coalesce(s.model, '') AS model, ${sql.raw(SKETCH_KEY_FUNCTION)}(s.duration_ms) AS b, count(*) AS n,
        sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt, sum(s.duration_ms) AS ds, max(s.duration_ms) AS dm
      FROM ${source} AS s ${join}
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) AS x
    GROUP BY x.grain, x.bucket, ${KEYS}`;
}

const MEASURES = sql.raw(`count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max`);

/**
 * The call key's measures of `source` (a relation with the event columns), without sketches: what a read adds to the
 * rollup rows' measures, where only a few sketches (the top tools', the totals') are read.
 */
export function callMeasuresSql(source: SQL): SQL {
  return sql`SELECT s.agent_type, s.mcp_name, s.tool, s.event_type, s.result, coalesce(s.deny_code, '') AS deny_code,
      coalesce(s.rule_applied, '') AS rule_applied, coalesce(s.model, '') AS model, ${MEASURES}
    FROM ${source} AS s
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`;
}

/** Actor rows of `source`: per actor and group (absent: ''), per bucket of each grain, the measures. */
export function actorRowsSql(source: SQL, grainList: readonly Grain[]): SQL {
  return sql`SELECT g.grain, ${bucketOf(sql`g.grain`, sql`s.event_time`)} AS bucket,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, ${MEASURES}
    FROM ${source} AS s CROSS JOIN ${grains(grainList)}
    GROUP BY 1, 2, 3, 4`;
}

/** Columns of observability_rollups in table order. */
export const ROLLUP_KEY = `grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name`;
export const ROLLUP_COLUMNS = `${ROLLUP_KEY}, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max,
  duration_sketch`;
const ROLLUP_MEASURES = 'calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max';

/**
 * Rollup rows of `source` in table order: kind 'call' rows at each of `callGrains`, keyed by the call key, with the
 * duration sketch; and kind 'actor' rows at each of `actorGrains` (UTC days, ISO weeks) keyed by actor and
 * group (no sketch). An empty grain list leaves that kind out.
 */
export function rollupSelectSql(
  source: SQL,
  callGrains: readonly Grain[],
  actorGrains: readonly Grain[] = ['day', 'week'],
): SQL {
  const call = sql`SELECT c.grain, 'call' AS kind, c.bucket, ${sql.raw(CALL_KEY.map((k) => `c.${k}`).join(', '))},
      '' AS actor_email, '' AS group_name, ${sql.raw(ROLLUP_MEASURES)}, c.duration_sketch
    FROM (${callRowsSql(source, callGrains)}) AS c`;
  const actor = sql`SELECT a.grain, 'actor' AS kind, a.bucket, '' AS agent_type, '' AS mcp_name, '' AS tool,
      '' AS event_type, '' AS result, '' AS deny_code, '' AS rule_applied, '' AS model, a.actor_email, a.group_name,
      ${sql.raw(ROLLUP_MEASURES)}, NULL::integer[] AS duration_sketch
    FROM (${actorRowsSql(source, actorGrains)}) AS a`;
  if (actorGrains.length === 0) return call;
  if (callGrains.length === 0) return actor;
  return sql`${call} UNION ALL ${actor}`;
}

const KEY = sql.raw(ROLLUP_KEY);
const SUM_ON_CONFLICT = sql.raw(
  [
    ...['calls', 'denied', 'errors', 'tokens_in', 'tokens_out', 'duration_sum'].map(
      (c) => `${c} = observability_rollups.${c} + EXCLUDED.${c}`,
    ),
    `duration_sketch = ${SKETCH_ADD_FUNCTION}(observability_rollups.duration_sketch, EXCLUDED.duration_sketch)`,
  ].join(', '),
);

/** The kinds of rollup rows: call rows, their sum per tool (tool rows), actor rows. */
export type RollupKind = 'call' | 'tool' | 'actor';

/**
 * The rollup grains each kind is kept at, finest first (hour for calls, day for actors: computed from events; tool
 * rows summed from the call rows of their bucket).
 */
export const ROLLUP_GRAINS = {
  call: CALL_GRAINS,
  tool: CALL_GRAINS,
  actor: ['day', 'week'],
} as const satisfies Record<RollupKind, readonly Grain[]>;

const ROLLUP_DIMS = ROLLUP_KEY.split(',')
  .map((c) => c.trim())
  .filter((c) => !['grain', 'kind', 'bucket'].includes(c));
/** The call key columns a tool row keeps; the others are ''. */
const TOOL_DIMS = ['mcp_name', 'tool'];

/**
 * Rollup rows (columns ROLLUP_COLUMNS) of `source`, itself rollup rows, re-bucketed at each (kind, grain) of
 * `targets`: the measures summed and the sketches merged per key, the maximum kept. Exact because buckets nest (hour in 6h in
 * day in ISO week), and cheap: a batch of events becomes a few hundred hourly rows, which are summed instead of
 * grouping every event once per grain. Tool rows are summed from call rows (or tool rows), their other keys ''.
 */
export function coarserRollupsSql(source: SQL, targets: ReadonlyArray<readonly [RollupKind, Grain]>): SQL {
  const pairs = sql.raw(
    `(VALUES ${targets.map(([k, g]) => `('${k}', '${g}')`).join(', ')}) AS g(kind, grain)`,
  );
  return mergedSketchRowsSql({
    from: sql`(${source}) AS r JOIN ${pairs} ON g.kind = r.kind OR (g.kind = 'tool' AND r.kind = 'call')`,
    groups: [
      ['g.grain', 'grain'],
      ['g.kind', 'kind'],
      [bucketOf(sql`g.grain`, sql`r.bucket`), 'bucket'],
      ...ROLLUP_DIMS.map((c) =>
        TOOL_DIMS.includes(c)
          ? ([`r.${c}`, c] as const)
          : ([`CASE WHEN g.kind = 'tool' THEN '' ELSE r.${c} END`, c] as const),
      ),
    ],
    sums: ['calls', 'denied', 'errors', 'tokens_in', 'tokens_out', 'duration_sum'],
    maxes: ['duration_max'],
  });
}

/**
 * The upsert of the rollups of `source` (hourly, 6-hourly, daily and weekly call rows, daily and weekly actor rows)
 * as one statement fragment: a CTE of the fold. The finest rows are computed from the events, the
 * coarser ones summed from them, in key order.
 */
export function rollupUpsertSql(source: SQL): SQL {
  const finest = rollupSelectSql(source, ['hour'], ['day']);
  const targets = (['call', 'tool', 'actor'] as const).flatMap((kind) =>
    ROLLUP_GRAINS[kind].map((g) => [kind, g] as const),
  );
  return sql`INSERT INTO observability_rollups (${sql.raw(ROLLUP_COLUMNS)})
    SELECT * FROM (${coarserRollupsSql(finest, targets)}) AS x ORDER BY ${KEY}
    ON CONFLICT (${KEY}) DO UPDATE SET ${SUM_ON_CONFLICT},
      duration_max = greatest(observability_rollups.duration_max, EXCLUDED.duration_max)
    RETURNING 1`;
}

/** Grains of observability_series: minute rows serve bucket=minute, hour and day rows the unfiltered series. */
export const SERIES_GRAINS: readonly Grain[] = ['minute', 'hour', 'day'];
export const SERIES_COLUMNS = `grain, bucket, event_type, result, calls, denied, errors, tokens_in, tokens_out,
  duration_max, duration_sketch`;

/**
 * Series rows of `source`: per grain, bucket, event type and result, calls, denied, errors, tokens, the longest
 * duration and the duration sketch (as the call rows: grouped by sketch key first, then aggregated).
 */
export function seriesSelectSql(source: SQL, grainList: readonly Grain[] = SERIES_GRAINS): SQL {
  return sql`SELECT x.grain, x.bucket, x.event_type, x.result, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, max(x.dm)::int AS duration_max, ${SKETCH_PIVOT}
    FROM (SELECT g.grain, ${bucketOf(sql`g.grain`, sql`s.event_time`)} AS bucket, s.event_type, s.result,
        ${sql.raw(SKETCH_KEY_FUNCTION)}(s.duration_ms) AS b, count(*) AS n, sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt,
        max(s.duration_ms) AS dm
      FROM ${source} AS s CROSS JOIN ${grains(grainList)}
      GROUP BY 1, 2, 3, 4, 5) AS x
    GROUP BY x.grain, x.bucket, x.event_type, x.result`;
}

/** The measures of series rows summed and the longest duration kept (mergedSketchRowsSql), in table order. */
export const SERIES_MEASURES = {
  sums: ['calls', 'denied', 'errors', 'tokens_in', 'tokens_out'],
  maxes: ['duration_max'],
} as const;

/** Series rows (SERIES_COLUMNS) of `source`, itself series rows, re-bucketed at each grain of `grainList`. */
export function coarserSeriesSql(source: SQL, grainList: readonly Grain[]): SQL {
  return mergedSketchRowsSql({
    from: sql`(${source}) AS r CROSS JOIN ${grains(grainList)}`,
    groups: [
      ['g.grain', 'grain'],
      [bucketOf(sql`g.grain`, sql`r.bucket`), 'bucket'],
      ['r.event_type', 'event_type'],
      ['r.result', 'result'],
    ],
    ...SERIES_MEASURES,
  });
}

/** The ON CONFLICT assignments that add a series row to the stored one of `table` (series or totals). */
const seriesSumOnConflict = (table: string) =>
  sql.raw(
    [
      ...['calls', 'denied', 'errors', 'tokens_in', 'tokens_out'].map(
        (c) => `${c} = ${table}.${c} + EXCLUDED.${c}`,
      ),
      `duration_max = greatest(${table}.duration_max, EXCLUDED.duration_max)`,
      `duration_sketch = ${SKETCH_ADD_FUNCTION}(${table}.duration_sketch, EXCLUDED.duration_sketch)`,
    ].join(', '),
  );

/** Series rows of the events `source` at every series grain: minute rows from the events, the coarser summed. */
export const seriesRowsSql = (source: SQL): SQL =>
  coarserSeriesSql(seriesSelectSql(source, ['minute']), SERIES_GRAINS);

/** The upsert of the series rows `rows` (a relation of seriesRowsSql's rows), in key order: a CTE of the fold. */
export function seriesUpsertSql(rows: SQL): SQL {
  return sql`INSERT INTO observability_series (${sql.raw(SERIES_COLUMNS)})
    SELECT * FROM ${rows} ORDER BY 1, 2, 3, 4
    ON CONFLICT (grain, bucket, event_type, result) DO UPDATE SET ${seriesSumOnConflict('observability_series')}
    RETURNING 1`;
}

/** Columns of observability_series_totals that are written (its percentiles are generated from them). */
export const SERIES_TOTALS_COLUMNS = `grain, bucket, calls, denied, errors, tokens_in, tokens_out, duration_max,
  duration_sketch`;

/** Totals rows (SERIES_TOTALS_COLUMNS) of `rows`, series rows: per grain and bucket, over event types and results. */
export function seriesTotalsSelectSql(rows: SQL): SQL {
  return mergedSketchRowsSql({
    from: sql`${rows} AS r`,
    groups: [
      ['r.grain', 'grain'],
      ['r.bucket', 'bucket'],
    ],
    ...SERIES_MEASURES,
  });
}

/** The upsert of the totals of the series rows `rows` into observability_series_totals: a CTE of the fold. */
export function seriesTotalsUpsertSql(rows: SQL): SQL {
  return sql`INSERT INTO observability_series_totals (${sql.raw(SERIES_TOTALS_COLUMNS)})
    SELECT * FROM (${seriesTotalsSelectSql(rows)}) AS x ORDER BY 1, 2
    ON CONFLICT (grain, bucket) DO UPDATE SET ${seriesSumOnConflict('observability_series_totals')}
    RETURNING 1`;
}

/** Name of the SQL function that folds newly stored events into the rollups (migrations: the newest defining it). */
export const FOLD_FUNCTION = 'observability_fold';

/** The event columns the rollup and series fragments read. */
const FOLDED_COLUMNS = `event_time, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
      actor_email, group_name, tokens_in, tokens_out, duration_ms`;

/**
 * CREATE OR REPLACE FUNCTION observability_fold(max_events): adds to the rollups and series the events stored since
 * the last fold, about max_events of them at most, and returns how many (folded) and whether more are waiting
 * (more). The ingest statement stores events only, each stamped with its transaction (ingest_xid).
 *
 * Exactly once, and not held back by an open transaction. A fold reads one snapshot: every transaction below its
 * xmax has either finished (its events are all visible) or is in its list of running ones (xip). It folds the events
 * of the finished transactions in [next_xid, cut), where cut is xmax or, when more than max_events wait, the
 * transaction at that position (whole transactions only); the running ones it passes go to pending_xids, and a later
 * fold folds each of them once it has finished (an aborted one has no events). So a batch still being written, or a
 * long transaction that never writes an event, delays only its own events, never the others'. Folds are serialized
 * by the watermark row lock: with `wait`, a second one waits, then starts where the first ended; without, it leaves
 * the work to the fold in progress and returns at once. When nothing is waiting (an index probe) it
 * returns before taking the lock, writing nothing.
 *
 * Bounded: the scheduled function observability/fold folds in calls of SCHEDULED_FOLD_MAX_EVENTS, each its own
 * transaction; a fold of many batches at once upserts each rollup row once per fold instead of once per batch.
 * Reads do not call it: they add the tail (readTailOf).
 *
 * Generated into a migration like ingest_events (scripts/function-migrations.ts).
 */
export function foldFunctionSql(): SQL {
  const ins = sql`ins`;
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(FOLD_FUNCTION)}(max_events bigint, wait boolean, OUT folded bigint, OUT more boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $fold$
DECLARE
  lo xid8;
  waiting xid8[];
  snap pg_snapshot;
  cut xid8;
  running xid8[];
  finished xid8[];
BEGIN
  folded := 0;
  more := false;
  SELECT next_xid, pending_xids INTO lo, waiting FROM observability_fold_state;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'observability_fold_state has no row (migrations/0006_observability_fold.sql inserts it)';
  END IF;
  -- Nothing to fold (the usual case of a read): answer without locking or writing anything.
  IF NOT EXISTS (SELECT 1 FROM observability_events
      WHERE ingest_xid >= lo AND ingest_xid < pg_snapshot_xmax(pg_current_snapshot()))
    AND NOT EXISTS (SELECT 1 FROM observability_events WHERE ingest_xid = ANY (waiting)) THEN
    RETURN;
  END IF;
  -- Something to fold: wait for a fold in progress, then start where it ended; or, for a read, leave it to that one.
  IF wait THEN
    SELECT next_xid, pending_xids INTO lo, waiting FROM observability_fold_state FOR UPDATE;
  ELSE
    SELECT next_xid, pending_xids INTO lo, waiting FROM observability_fold_state FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      more := true;
      RETURN;
    END IF;
  END IF;
  snap := pg_current_snapshot();
  cut := pg_snapshot_xmax(snap);
  SELECT e.ingest_xid INTO cut FROM observability_events e
    WHERE e.ingest_xid >= lo AND e.ingest_xid < cut ORDER BY e.ingest_xid OFFSET max_events LIMIT 1;
  IF FOUND THEN
    more := true;
    -- A single transaction with more than max_events events is folded whole.
    IF cut = lo THEN
      SELECT coalesce(min(e.ingest_xid), pg_snapshot_xmax(snap)) INTO cut FROM observability_events e
        WHERE e.ingest_xid > lo AND e.ingest_xid < pg_snapshot_xmax(snap);
    END IF;
  ELSE
    cut := pg_snapshot_xmax(snap);
  END IF;
  running := ARRAY(SELECT pg_snapshot_xip(snap));
  -- The pending transactions that have finished since: their events are all visible now (none if they aborted).
  finished := ARRAY(SELECT x FROM unnest(waiting) AS x WHERE x <> ALL (running));
  WITH ins AS MATERIALIZED (SELECT ${sql.raw(FOLDED_COLUMNS)} FROM observability_events
        WHERE (ingest_xid >= lo AND ingest_xid < cut AND ingest_xid <> ALL (running))
          OR ingest_xid = ANY (finished)),
      roll AS (${rollupUpsertSql(ins)}),
      sr AS MATERIALIZED (${seriesRowsSql(ins)}),
      series AS (${seriesUpsertSql(sql`sr`)}),
      totals AS (${seriesTotalsUpsertSql(sql`sr`)})
    SELECT count(*) INTO folded FROM ins;
  UPDATE observability_fold_state SET next_xid = cut, folded_at = now(), events_folded = events_folded + folded,
    pending_xids = ARRAY(SELECT x FROM unnest(waiting) AS x WHERE x = ANY (running)
      UNION ALL SELECT x FROM unnest(running) AS x WHERE x >= lo AND x < cut ORDER BY 1);
END
$fold$`;
}

/** The most events one call of the scheduled fold folds, in one transaction (observability/fold loops). */
export const SCHEDULED_FOLD_MAX_EVENTS = 200_000;

/** How long one run of a scheduled function folds: half their 60 s timeout (infra/constructs/functions.ts). */
export const FOLD_BUDGET_MS = 30_000;

export interface FoldResult {
  folded: number;
  /** More events were waiting than max_events: call again. */
  more: boolean;
}

/**
 * Folds the events stored since the last fold into the rollups (observability_fold(), above), at most `maxEvents`
 * (whole transactions); with `wait`, after a fold in progress. The schedule calls it (foldBacklog); reads never do,
 * they add the tail instead (readTailOf).
 */
export const foldRollups = (db: Db, options: RollupFoldOptions = {}): Promise<FoldResult> =>
  callFold(db, rollupFoldCall(options));

interface RollupFoldOptions {
  maxEvents?: number;
  wait?: boolean;
}

/** The call of observability_fold (above) as a FROM item; with no options, bounded and never waiting. */
export const rollupFoldCall = ({
  maxEvents = READ_TAIL_MAX_EVENTS,
  wait = false,
}: RollupFoldOptions = {}): SQL => sql`${sql.raw(FOLD_FUNCTION)}(${maxEvents}::bigint, ${wait}::boolean)`;

/** Runs one call of a fold function (its FROM item, `call`), whose result is (folded, more). */
export async function callFold(db: Db, call: SQL): Promise<FoldResult> {
  const [row] = await queryRows(db, sql`SELECT folded, more FROM ${call}`, {
    folded: col.number,
    more: col.bool,
  });
  return { folded: Number(row?.folded ?? 0), more: row?.more === true };
}

/**
 * Calls `fold` (one bounded call, its own transaction, so the work done stays done and no lock is held long) until
 * nothing waits or `budgetMs` has passed; what is left waits for the next run. The scheduled folds of the rollups
 * (foldBacklog) and of the fleet counters (shared/observability/fleet/stats.ts) loop with it.
 */
export async function repeatFold(
  fold: () => Promise<FoldResult>,
  budgetMs: number,
): Promise<FoldResult & { calls: number }> {
  const started = performance.now();
  let folded = 0;
  let calls = 0;
  for (;;) {
    const result = await fold();
    folded += result.folded;
    calls++;
    if (!result.more || performance.now() - started >= budgetMs) return { folded, more: result.more, calls };
  }
}

/** Folds the events backlog in calls of SCHEDULED_FOLD_MAX_EVENTS (repeatFold) for up to `budgetMs`. */
export const foldBacklog = (db: Db, budgetMs: number) =>
  repeatFold(() => foldRollups(db, { maxEvents: SCHEDULED_FOLD_MAX_EVENTS, wait: true }), budgetMs);

/**
 * Recomputes every rollup and series row from the events table (a backfill after a bulk load; the benchmark's
 * seeding), in one transaction: hourly call rows, daily actor rows and minute series rows from the events, each
 * coarser grain from the finer one (which sums exactly: buckets nest).
 */
export async function rebuildRollups(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    // Hash aggregation of millions of events instead of sorting them on disk (default 4 MB).
    await tx.execute(sql`SET LOCAL work_mem = '256MB'`);
    // As a fold does (foldFunctionSql): no fold meanwhile; every event below the oldest running transaction now,
    // and every event without ingest_xid, is in the rebuilt rows; later ones are left to the next fold.
    await tx.execute(sql`SELECT 1 FROM observability_fold_state FOR UPDATE`);
    const [mark] = await queryRows(tx, sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS hi`, {
      hi: col.text,
    });
    const hi = sql`${mark?.hi}::xid8`;
    await tx.execute(sql`DELETE FROM observability_rollups`);
    await tx.execute(sql`DELETE FROM observability_series`);
    await tx.execute(sql`DELETE FROM observability_series_totals`);
    const events = sql`(SELECT * FROM observability_events WHERE ingest_xid IS NULL OR ingest_xid < ${hi})`;
    // In bucket order, as a live table fills: the rows of a range share pages.
    await tx.execute(sql`INSERT INTO observability_rollups (${sql.raw(ROLLUP_COLUMNS)})
      SELECT * FROM (${rollupSelectSql(events, ['hour'], ['day'])}) AS x ORDER BY bucket, kind`);
    // Each coarser grain from the finer one, in bucket order.
    const from = (kind: RollupKind, grain: Grain) =>
      sql`SELECT * FROM observability_rollups WHERE kind = ${lit(kind)} AND grain = ${lit(grain)}`;
    for (const [kind, to, fine] of [
      ['call', '6h', 'hour'],
      ['call', 'day', '6h'],
      ['call', 'week', 'day'],
      ['actor', 'week', 'day'],
    ] as const) {
      await tx.execute(sql`INSERT INTO observability_rollups (${sql.raw(ROLLUP_COLUMNS)})
        SELECT * FROM (${coarserRollupsSql(from(kind, fine), [[kind, to]])}) AS x ORDER BY bucket`);
    }
    // Tool rows from the call rows of the same bucket.
    for (const grain of CALL_GRAINS) {
      await tx.execute(sql`INSERT INTO observability_rollups (${sql.raw(ROLLUP_COLUMNS)})
        SELECT * FROM (${coarserRollupsSql(from('call', grain), [['tool', grain]])}) AS x ORDER BY bucket`);
    }
    await tx.execute(sql`INSERT INTO observability_series (${sql.raw(SERIES_COLUMNS)})
      SELECT * FROM (${seriesSelectSql(events, ['minute'])}) AS x ORDER BY bucket`);
    for (const [to, fine] of [
      ['hour', 'minute'],
      ['day', 'hour'],
    ] as const) {
      await tx.execute(sql`INSERT INTO observability_series (${sql.raw(SERIES_COLUMNS)})
        SELECT * FROM (${coarserSeriesSql(sql`SELECT * FROM observability_series WHERE grain = ${lit(fine)}`, [to])}) AS x
        ORDER BY bucket`);
    }
    await tx.execute(sql`INSERT INTO observability_series_totals (${sql.raw(SERIES_TOTALS_COLUMNS)})
      SELECT * FROM (${seriesTotalsSelectSql(sql`observability_series`)}) AS x ORDER BY 1, 2`);
    await tx.execute(
      sql`UPDATE observability_fold_state SET next_xid = ${hi}, pending_xids = '{}', folded_at = now()`,
    );
  });
}
