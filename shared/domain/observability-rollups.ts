// The rollups of observability_events (table observability_rollups, migrations/0002_observability.sql): one SQL
// fragment that aggregates any relation with the event columns into rollup rows. The ingest statement
// (shared/domain/events.ts) upserts the aggregate of the rows it just inserted; the summary's raw path
// (shared/domain/observability.ts) computes the very same aggregate from the events table, so both paths read alike
// and a property test can compare them. Design notes: the top of shared/domain/observability.ts.
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';

export type Grain = 'minute' | 'hour' | 'day' | 'week';

/** Number of buckets of a duration histogram (columns h1..h64) and their growth factor (obs_duration_bucket). */
export const HIST_BUCKETS = 64;
export const HIST_FACTOR = 1.25;
/** h1, h2, ... h64. */
export const HIST_COLUMNS = Array.from({ length: HIST_BUCKETS }, (_, i) => `h${i + 1}`);

/** The 1-based histogram bucket of a duration, as obs_duration_bucket computes it. */
export function histBucket(ms: number): number {
  return ms <= 1 ? 1 : Math.min(HIST_BUCKETS, Math.ceil(Math.log(ms) / Math.log(HIST_FACTOR)) + 1);
}

/** The upper bound (ms) of a 1-based bucket. */
export const histUpper = (bucket: number): number => HIST_FACTOR ** (bucket - 1);

/**
 * Nearest-rank percentile from a histogram: the upper bound of the bucket holding rank ceil(p * n), capped by the
 * largest duration seen. null when the histogram is empty.
 */
export function histPercentile(hist: readonly number[], p: number, max: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i] ?? 0;
    if (seen >= rank) return Math.min(Math.round(histUpper(i + 1)), max);
  }
  return max;
}

const grains = (list: readonly Grain[]): SQL =>
  sql.raw(`(VALUES ${list.map((g) => `('${g}')`).join(', ')}) AS g(grain)`);

const HIST_COUNTS = sql.raw(
  HIST_COLUMNS.map((h, i) => `nullif(count(*) FILTER (WHERE s.b = ${i + 1}), 0)::int AS ${h}`).join(', '),
);
const HIST_NULLS = sql.raw(HIST_COLUMNS.map((h) => `NULL::int AS ${h}`).join(', '));
const MEASURES = sql.raw(`count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max`);

/** Columns of observability_rollups in table order. */
export const ROLLUP_KEY = `grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name`;
export const ROLLUP_COLUMNS = `${ROLLUP_KEY}, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max,
  ${HIST_COLUMNS.join(', ')}`;

/**
 * Rollup rows of `source` (a relation with the event columns): kind 'call' rows at each of `callGrains`, keyed by
 * agent, MCP, tool, event type, result, deny code, rule and model, with the duration histogram; and kind 'actor'
 * rows at each of `actorGrains` (UTC days, ISO weeks) keyed by actor and group (no histogram). Columns in table
 * order. An empty grain list leaves that kind out.
 */
export function rollupSelectSql(
  source: SQL,
  callGrains: readonly Grain[],
  actorGrains: readonly Grain[] = ['day', 'week'],
): SQL {
  const bucket = sql`date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
  const call = sql`SELECT g.grain, 'call' AS kind, ${bucket} AS bucket, s.agent_type, s.mcp_name, s.tool,
      s.event_type, s.result, coalesce(s.deny_code, '') AS deny_code, coalesce(s.rule_applied, '') AS rule_applied,
      coalesce(s.model, '') AS model, '' AS actor_email, '' AS group_name, ${MEASURES}, ${HIST_COUNTS}
    FROM (SELECT *, obs_duration_bucket(duration_ms) AS b FROM ${source} AS x) AS s CROSS JOIN ${grains(callGrains)}
    GROUP BY 1, 3, 4, 5, 6, 7, 8, 9, 10, 11`;
  const actor = sql`SELECT g.grain, 'actor' AS kind, ${bucket} AS bucket, '' AS agent_type,
      '' AS mcp_name, '' AS tool, '' AS event_type, '' AS result, '' AS deny_code, '' AS rule_applied, '' AS model,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, ${MEASURES},
      ${HIST_NULLS}
    FROM ${source} AS s CROSS JOIN ${grains(actorGrains)}
    GROUP BY 1, 3, 12, 13`;
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
    // Empty histogram buckets stay NULL (one bit instead of four bytes).
    ...HIST_COLUMNS.map(
      (c) => `${c} = nullif(coalesce(observability_rollups.${c}, 0) + coalesce(EXCLUDED.${c}, 0), 0)`,
    ),
  ].join(', '),
);

/**
 * The upsert of the rollups of `source` (hourly, daily and weekly call rows, daily and weekly actor rows) as one statement
 * fragment: a
 * CTE of the ingest statement. Rows are inserted in key order so that concurrent batches lock shared rows in the
 * same order.
 */
export function rollupUpsertSql(source: SQL): SQL {
  return sql`INSERT INTO observability_rollups (${sql.raw(ROLLUP_COLUMNS)})
    SELECT * FROM (${rollupSelectSql(source, ['hour', 'day', 'week'])}) AS x ORDER BY ${KEY}
    ON CONFLICT (${KEY}) DO UPDATE SET ${SUM_ON_CONFLICT},
      duration_max = greatest(observability_rollups.duration_max, EXCLUDED.duration_max)
    RETURNING 1`;
}

/** Recomputes every rollup from the events table (backfill after a bulk load; the benchmark's seeding). */
export async function rebuildRollups(db: Db): Promise<void> {
  await db.execute(sql`DELETE FROM observability_rollups`);
  await db.execute(
    sql`WITH roll AS (${rollupUpsertSql(sql`observability_events`)}) SELECT count(*) FROM roll`,
  );
}
