// The rollups and series as stored against a recomputation from the events table (the same SQL fragments the raw
// paths use), for the property, concurrency and fold tests.
import assert from 'node:assert/strict';
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '#shared/core/db/database.ts';
import { queryJson } from '#shared/core/db/query.ts';
import { SKETCH_KEY_FUNCTION, sketchOfSql } from '#shared/observability/duration-sketch.ts';
import {
  bucketOf,
  CALL_GRAINS,
  foldRollups,
  ROLLUP_COLUMNS,
  rollupSelectSql,
  SERIES_COLUMNS,
  SERIES_TOTALS_COLUMNS,
  seriesSelectSql,
  seriesTotalsSelectSql,
} from '#shared/observability/rollups/rollups.ts';

/**
 * Rows of `table` (its `columns`, default all) and of `recomputed` that are not in the other (EXCEPT ALL both ways),
 * computed in SQL.
 */
async function difference(db: Db, table: string, recomputed: SQL, columns = '*') {
  return queryJson<{ n: number; rows: unknown[] | null; stored: number }>(
    db,
    sql`WITH s AS (SELECT ${sql.raw(columns)} FROM ${sql.raw(table)}), r AS (${recomputed}),
      d AS ((SELECT 'stored' AS side, a.* FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM r) a)
        UNION ALL (SELECT 'recomputed' AS side, b.* FROM (SELECT * FROM r EXCEPT ALL SELECT * FROM s) b))
    SELECT json_build_object('n', (SELECT count(*) FROM d), 'rows', (SELECT json_agg(x) FROM (SELECT * FROM d
      LIMIT 6) x), 'stored', (SELECT count(*) FROM s)) AS j`,
  );
}

/**
 * Tool rows of `events` computed from the events themselves, not from call rows (as the fold sums them): per grain,
 * bucket, MCP server and tool, the measures and the sketch.
 */
const toolRowsSql = (
  events: SQL,
): SQL => sql`SELECT x.grain, 'tool', x.bucket, '', x.mcp_name, x.tool, '', '', '', '', '',
    '', '', sum(x.n)::bigint, sum(x.d)::bigint, sum(x.e)::bigint, sum(x.ti)::bigint, sum(x.tt)::bigint,
    sum(x.ds)::bigint, max(x.dm)::int, ${sql.raw(sketchOfSql('x.b', 'x.n'))}
  FROM (SELECT g.grain, ${bucketOf(sql`g.grain`, sql`s.event_time`)} AS bucket, s.mcp_name, s.tool,
      ${sql.raw(SKETCH_KEY_FUNCTION)}(s.duration_ms) AS b, count(*) AS n, count(*) FILTER (WHERE s.result = 'denied') AS d,
      count(*) FILTER (WHERE s.result = 'error') AS e, sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt,
      sum(s.duration_ms) AS ds, max(s.duration_ms) AS dm
    FROM ${events} s CROSS JOIN unnest(${sql.raw(`ARRAY[${CALL_GRAINS.map((g) => `'${g}'`).join(', ')}]`)}) AS g(grain)
    GROUP BY 1, 2, 3, 4, 5) x
  GROUP BY x.grain, x.bucket, x.mcp_name, x.tool`;

/**
 * Folds what is pending, as every reader does first, then asserts that observability_rollups, observability_series and
 * observability_series_totals hold exactly what a recomputation from every stored event gives.
 */
export async function assertRollupsEqualRecomputation(db: Db): Promise<void> {
  await foldRollups(db);
  const rollups = await difference(
    db,
    'observability_rollups',
    sql`SELECT * FROM (${rollupSelectSql(sql`observability_events`, CALL_GRAINS)}
      UNION ALL ${toolRowsSql(sql`observability_events`)}) AS x(${sql.raw(ROLLUP_COLUMNS)})`,
  );
  assert.equal(rollups.n, 0, `observability_rollups = recomputation: ${JSON.stringify(rollups.rows)}`);
  const series = await difference(
    db,
    'observability_series',
    sql`SELECT * FROM (${seriesSelectSql(sql`observability_events`)}) AS x(${sql.raw(SERIES_COLUMNS)})`,
  );
  assert.equal(series.n, 0, `observability_series = recomputation: ${JSON.stringify(series.rows)}`);
  // The stored columns; the generated percentiles are held to histPercentile by test/integration/observability/percentile.test.ts.
  const totals = await difference(
    db,
    'observability_series_totals',
    sql`SELECT * FROM (${seriesTotalsSelectSql(sql`(${seriesSelectSql(sql`observability_events`)})`)}) AS x(${sql.raw(SERIES_TOTALS_COLUMNS)})`,
    SERIES_TOTALS_COLUMNS,
  );
  assert.equal(totals.n, 0, `observability_series_totals = recomputation: ${JSON.stringify(totals.rows)}`);
}
