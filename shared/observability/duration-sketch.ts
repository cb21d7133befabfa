// The duration sketch of the rollups (DDSketch's log buckets): what a bucket holds, how sketches merge and how a
// percentile is read, in JavaScript and as the SQL the fold and the reads run. docs/observability.md states the
// guarantee.
//
// * Bucket (key) of a duration of ms milliseconds: 0 for 0 ms; else ceil(log_gamma(ms)) + 1, which holds
//   (gamma^(key-2), gamma^(key-1)] and is reported as 2 gamma^(key-1) / (gamma + 1), within SKETCH_ALPHA of every
//   value it holds, moved into the range of the integers it holds (durations are integers): a bucket holding one
//   integer (all below about 28 ms) reports it exactly, and moving closer to every value keeps the bound.
// * Stored sparse, as one integer[][] column: row 1 the keys in ascending order, row 2 their counts; NULL when empty.
//   Slices are written with parenthesized bounds (`s[(1):(1)]`): the Data API takes `:1` in `s[1:1]` for a parameter.
//   One column, not two parallel arrays, so that an upsert merges it with one function call (obs_sketch_add) and
//   the Data API returns it as one value. Not jsonb: merging unnests the pairs and sums them by key, and
//   unnest(integer[]) feeds that hash aggregate without parsing text keys and values of every pair.
// * Merged by summing counts per key: across rollup rows and with the tail of unfolded events (mergedSketchRowsSql;
//   mergeSketches in JavaScript, where a read returns few rows' sketches as stored).
// * Percentile p of n durations: percentile_cont's position h = p (n - 1) (0-based ranks in ascending order),
//   interpolated between the reported values of ranks floor(h) and floor(h) + 1 as percentile_cont interpolates
//   between the exact ones. Each reported value is within SKETCH_ALPHA of its exact value, all are >= 0, so the
//   interpolation is within SKETCH_ALPHA of percentile_cont's; capped by the longest duration, which percentile_cont
//   never exceeds. Rounded to 0.001 ms (what the console shows): an interpolated value above 0 is at least 0.01 ms
//   (p is 0.5, 0.95 or 0.99, so the fraction is a multiple of 0.01), and below 28 ms the values are exact integers,
//   so rounding adds at most 0.0005 / (0.01 x 28), under 0.2 %, to SKETCH_ALPHA's 1.8 %.
import { type SQL, sql } from 'drizzle-orm';
import { SKETCH_GAMMA, SKETCH_PERCENTILES_FUNCTION } from '../core/db/histogram.ts';

/**
 * A sketch as the database returns it: [keys, counts]; null when empty. Stored sketches hold their keys ascending;
 * those a read merges (mergedSketchRowsSql with ordered false) in any order.
 */
export type DurationSketch = readonly [readonly number[], readonly number[]] | null;

const LN_GAMMA = Math.log(SKETCH_GAMMA);

/** The key of a duration in milliseconds, as obs_sketch_key computes it. */
export const sketchKey = (ms: number): number => (ms <= 0 ? 0 : Math.ceil(Math.log(ms) / LN_GAMMA) + 1);

/** The value reported for the durations of a key, as obs_sketch_value computes it. */
export function sketchValue(key: number): number {
  if (key <= 0) return 0;
  const upper = SKETCH_GAMMA ** (key - 1);
  const value = (2 * upper) / (SKETCH_GAMMA + 1);
  const low = Math.floor(upper / SKETCH_GAMMA) + 1;
  const high = Math.floor(upper);
  return high < low ? value : Math.min(Math.max(value, low), high);
}

/** A reported percentile: to 0.001 ms, as obs_sketch_percentiles rounds it. */
const toMicros = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * The percentiles `ps` of a sketch (the rank rule above), each capped by `max`, the longest duration; null for each
 * when the sketch is empty. The SQL twin is obs_sketch_percentiles.
 */
export function sketchPercentiles(
  sketch: DurationSketch,
  ps: readonly number[],
  max: number,
): (number | null)[] {
  const [unsortedKeys, unsortedCounts] = sketch ?? [[], []];
  const order = unsortedKeys
    .map((_, i) => i)
    .sort((a, b) => Number(unsortedKeys[a]) - Number(unsortedKeys[b]));
  const keys = order.map((i) => unsortedKeys[i] as number);
  const counts = order.map((i) => unsortedCounts[i] as number);
  const total = counts.reduce((a, b) => a + Number(b), 0);
  if (total === 0) return ps.map(() => null);
  const at = (rank: number): number => {
    let seen = 0;
    for (let i = 0; i < keys.length; i++) {
      seen += Number(counts[i]);
      if (seen > rank) return sketchValue(Number(keys[i]));
    }
    return sketchValue(Number(keys.at(-1)));
  };
  return ps.map((p) => {
    const h = p * (total - 1);
    const lo = Math.floor(h);
    const low = at(lo);
    const value = h > lo ? low + (h - lo) * (at(lo + 1) - low) : low;
    return toMicros(Math.min(value, max));
  });
}

/**
 * The sum of sketches (counts added per key; keys in any order, as sketchPercentiles takes them): the JavaScript twin
 * of mergedSketchRowsSql, for a read that returns a few rows' sketches as they are stored.
 */
export function mergeSketches(sketches: readonly DurationSketch[]): DurationSketch {
  const counts = new Map<number, number>();
  for (const sketch of sketches) {
    if (!sketch) continue;
    const [keys, n] = sketch;
    for (let i = 0; i < keys.length; i++) {
      const key = Number(keys[i]);
      counts.set(key, (counts.get(key) ?? 0) + Number(n[i]));
    }
  }
  return counts.size ? [[...counts.keys()], [...counts.values()]] : null;
}

/** Name of the SQL twin of sketchKey. */
export const SKETCH_KEY_FUNCTION = 'obs_sketch_key';
/** Name of the SQL twin of sketchValue. */
export const SKETCH_VALUE_FUNCTION = 'obs_sketch_value';
/** Name of the SQL function that merges two sketches. */
export const SKETCH_ADD_FUNCTION = 'obs_sketch_add';
export { SKETCH_PERCENTILES_FUNCTION };

/** CREATE OR REPLACE FUNCTION obs_sketch_key(ms): sketchKey in SQL (gamma written into it from SKETCH_GAMMA). */
export const sketchKeyFunctionSql = (): SQL =>
  sql.raw(`CREATE OR REPLACE FUNCTION ${SKETCH_KEY_FUNCTION}(ms integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $key$
  SELECT CASE WHEN ms <= 0 THEN 0 ELSE ceil(ln(ms::double precision) / ${LN_GAMMA}::double precision)::integer + 1 END
$key$`);

/** CREATE OR REPLACE FUNCTION obs_sketch_value(key): sketchValue in SQL. */
export const sketchValueFunctionSql = (): SQL =>
  sql.raw(`CREATE OR REPLACE FUNCTION ${SKETCH_VALUE_FUNCTION}(key integer)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $value$
  SELECT CASE WHEN key <= 0 THEN 0::double precision
    WHEN floor(u.upper) < floor(u.upper / ${SKETCH_GAMMA}::double precision) + 1 THEN u.value
    ELSE least(greatest(u.value, floor(u.upper / ${SKETCH_GAMMA}::double precision) + 1), floor(u.upper)) END
  FROM (SELECT power(${SKETCH_GAMMA}::double precision, key - 1) AS upper,
    2 * power(${SKETCH_GAMMA}::double precision, key - 1) / ${SKETCH_GAMMA + 1}::double precision AS value) AS u
$value$`);

/**
 * CREATE OR REPLACE FUNCTION obs_sketch_add(a, b): the sum of two sketches (counts added per key, keys ascending);
 * the other when one is NULL. The fold's upserts merge a stored row's sketch with the new one by it.
 */
export const sketchAddFunctionSql = (): SQL =>
  sql.raw(`CREATE OR REPLACE FUNCTION ${SKETCH_ADD_FUNCTION}(a integer[], b integer[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $add$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE (
    SELECT ARRAY[array_agg(m.k ORDER BY m.k), array_agg(m.c ORDER BY m.k)]
    FROM (SELECT u.k, sum(u.c)::integer AS c
      FROM (SELECT a[1][i] AS k, a[2][i] AS c FROM generate_subscripts(a, 2) AS i
        UNION ALL SELECT b[1][i], b[2][i] FROM generate_subscripts(b, 2) AS i) AS u
      GROUP BY u.k) AS m) END
$add$`);

/**
 * CREATE OR REPLACE FUNCTION obs_sketch_percentiles(s, ps, dmax): sketchPercentiles in SQL, for the generated
 * column of observability_series_totals (IMMUTABLE). A property test holds it to sketchPercentiles.
 */
export const sketchPercentilesFunctionSql = (): SQL =>
  sql.raw(`CREATE OR REPLACE FUNCTION ${SKETCH_PERCENTILES_FUNCTION}(s integer[], ps double precision[], dmax integer)
RETURNS double precision[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $percentiles$
DECLARE
  n CONSTANT integer := coalesce(array_length(ps, 1), 0);
  len integer := coalesce(array_length(s, 2), 0);
  total bigint := 0;
  result double precision[] := array_fill(NULL::double precision, ARRAY[n]);
  h double precision;
  lo bigint;
  low double precision;
  high double precision;
  seen bigint;
  i integer;
BEGIN
  FOR i IN 1 .. len LOOP
    total := total + s[2][i];
  END LOOP;
  IF total = 0 THEN
    RETURN result;
  END IF;
  FOR j IN 1 .. n LOOP
    h := ps[j] * (total - 1);
    lo := floor(h);
    low := NULL;
    high := NULL;
    seen := 0;
    FOR i IN 1 .. len LOOP
      seen := seen + s[2][i];
      IF low IS NULL AND seen > lo THEN
        low := ${SKETCH_VALUE_FUNCTION}(s[1][i]);
      END IF;
      IF seen > lo + 1 OR i = len THEN
        high := ${SKETCH_VALUE_FUNCTION}(s[1][i]);
        EXIT;
      END IF;
    END LOOP;
    -- A fraction this small adds nothing at 0.001 ms; times a gap below 1 it would underflow, which PostgreSQL
    -- raises as an error where JavaScript gives 0.
    result[j] := round(least(CASE WHEN h - lo > 1e-300 THEN low + (h - lo) * (high - low) ELSE low END, dmax)::numeric, 3);
  END LOOP;
  RETURN result;
END
$percentiles$`);

/**
 * The sketch of grouped rows x that carry a key x.<key> and its count x.<count> (one row per key of the group); keys
 * ascending when `ordered` (a stored sketch), else in any order: PostgreSQL 15 never hashes an aggregate with ORDER
 * BY, and sorts every (key, count) pair merged for it instead, while sketchPercentiles sorts the few merged keys.
 */
export const sketchOfSql = (key: string, count: string, ordered = true): string => {
  const by = ordered ? ` ORDER BY ${key}` : '';
  return `CASE WHEN count(${key}) > 0 THEN ARRAY[array_agg(${key}${by}) FILTER (WHERE ${key} IS NOT NULL),
    array_agg(${count}::integer${by}) FILTER (WHERE ${key} IS NOT NULL)] END`;
};

interface MergeSpec {
  /** A FROM clause whose rows are aliased r and carry r.duration_sketch. */
  from: SQL;
  /** Group expressions and their names, in output order. */
  groups: ReadonlyArray<readonly [string | SQL, string]>;
  /** Columns of r summed (bigint), in output order, after the groups. */
  sums?: readonly string[];
  /** Columns of r whose maximum is kept, after the sums. */
  maxes?: readonly string[];
  /** A condition on r. */
  where?: SQL;
  /** Keys ascending (a sketch to store); false for one that only sketchPercentiles reads (sketchOfSql). */
  ordered?: boolean;
}

/**
 * The rows of spec.from grouped by spec.groups with their measures summed or maximized and their sketches merged
 * into duration_sketch (last column). One pass: each row's sketch is unnested into (key, count) pairs, which are
 * summed per group and key; the row's measures ride on its first pair only (or on its one row when it has no
 * sketch), so that each is summed once. The pairs come from unnest of the two rows' slices (each pair once, no
 * subscript per element), whose row estimate is small, not from generate_subscripts, estimated at 1,000 rows a call: that
 * estimate priced a summary high enough for PostgreSQL to JIT-compile it, which cost more than the query. OFFSET 0
 * keeps the pairs' subquery from being pulled up: pulled up, every pair carried its row's whole sketch into the sort
 * that groups them.
 */
export function mergedSketchRowsSql({
  from,
  groups,
  sums = [],
  maxes = [],
  where,
  ordered = true,
}: MergeSpec): SQL {
  const names = groups.map(([, name]) => name);
  const groupList = groups.map(
    ([expr, name]) => sql`${typeof expr === 'string' ? sql.raw(expr) : expr} AS ${sql.raw(name)}`,
  );
  const inner = [
    ...groupList,
    sql.raw('u.k AS k, sum(u.c)::bigint AS c'),
    ...sums.map((c) => sql.raw(`sum(r.${c}) FILTER (WHERE u.o IS NULL OR u.o = 1) AS ${c}`)),
    ...maxes.map((c) => sql.raw(`max(r.${c}) AS ${c}`)),
  ];
  const positions = Array.from({ length: names.length + 1 }, (_, i) => i + 1).join(', ');
  const outer = [
    ...names.map((n) => `z.${n}`),
    ...sums.map((c) => `coalesce(sum(z.${c}), 0)::bigint AS ${c}`),
    ...maxes.map((c) => `max(z.${c})::integer AS ${c}`),
    `${sketchOfSql('z.k', 'z.c', ordered)} AS duration_sketch`,
  ].join(', ');
  return sql`SELECT ${sql.raw(outer)}
    FROM (SELECT ${sql.join(inner, sql`, `)}
      FROM ${from} LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      ${where ? sql`WHERE ${where}` : sql``}
      GROUP BY ${sql.raw(positions)}) AS z
    ${names.length ? sql.raw(`GROUP BY ${names.map((n) => `z.${n}`).join(', ')}`) : sql``}`;
}
