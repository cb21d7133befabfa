// obs_sum(bigint): the sum of bigint values as a bigint, for reads that add up the bigint measures of stored
// aggregates (rollup, series and actor rows) per group.
//
// PostgreSQL's sum(bigint) returns numeric: it keeps a 128-bit state allocated per group and builds each group's
// result as a numeric, which those reads then cast back to bigint. Over the 2,000 groups of a 24 hour summary's
// actor rows that was about half of the aggregation (8.1 against 4.6 ms for the same statement, 30 runs each, on the
// bench database of docs/benchmarks.md). This aggregate adds in the bigint itself (int8pl, passed by value): the same
// exact sum, NULL for no rows or only NULLs as sum() gives, and a sum past 2^63 - 1 raises int8pl's "bigint out of
// range" rather than returning a wrong value (a count or millisecond total that large is not reachable: 2^63 ms is
// 292 million years of tool calls). Sums of integer columns keep sum(integer), which already returns a bigint by value.
import { type SQL, sql } from 'drizzle-orm';

/** Name of the aggregate. */
export const SUM_AGGREGATE = 'obs_sum';

/** `obs_sum(column) AS column`, for a list of measures summed per group. */
export const summed = (column: string): string => `${SUM_AGGREGATE}(${column}) AS ${column}`;

/** CREATE OR REPLACE AGGREGATE obs_sum(bigint); generated into a migration (scripts/function-migrations.ts). */
export const sumAggregateSql = (): SQL =>
  sql.raw(`CREATE OR REPLACE AGGREGATE ${SUM_AGGREGATE}(bigint) (
  SFUNC = int8pl,
  STYPE = bigint,
  COMBINEFUNC = int8pl,
  PARALLEL = SAFE
)`);
