// The summary's duration percentiles held to percentile_cont over the raw events of the same database: the worst
// relative error over the totals, every top tool and every series bucket. The property test
// (test/integration/observability/sketch.test.ts) and bench:observability both read it.
import { sql } from 'drizzle-orm';
import type { Db } from '#shared/core/db/database.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { tsParam } from '#shared/core/db/sql-values.ts';
import type { observabilitySummary } from '#shared/observability/summary/summary.ts';

interface Percentiles {
  duration_p50_ms: number | null;
  duration_p95_ms: number | null;
  duration_p99_ms: number | null;
}

/** The summary whose percentiles are compared (observabilitySummary's result). */
export type SummaryPercentiles = Awaited<ReturnType<typeof observabilitySummary>>;

/** The three percentile fields of a totals, top-list or series row. */
function percentilesOf(row: object): Percentiles {
  const r: Record<string, unknown> = { ...row };
  const value = (k: (typeof P)[number]) => (r[k] === null || r[k] === undefined ? null : Number(r[k]));
  return {
    duration_p50_ms: value('duration_p50_ms'),
    duration_p95_ms: value('duration_p95_ms'),
    duration_p99_ms: value('duration_p99_ms'),
  };
}

export interface PercentileError {
  /** The largest |reported - exact| / exact seen (0 when reported and exact are both 0). */
  worst: number;
  /** Where it was: totals, tool <mcp>/<tool>, or bucket <start>; with the percentile and both values. */
  where: string;
  compared: number;
}

const P = ['duration_p50_ms', 'duration_p95_ms', 'duration_p99_ms'] as const;

/** |reported - exact| / exact; 0 for 0 = 0, Infinity for any other value against an exact 0, or a missing value. */
export const relativeError = (reported: number | null, exact: number): number =>
  reported === null
    ? Number.POSITIVE_INFINITY
    : exact === 0
      ? reported === 0
        ? 0
        : Infinity
      : Math.abs(reported - exact) / exact;

/**
 * Compares the summary's p50 / p95 / p99 of the totals, of each top tool and of each non-empty series bucket with
 * percentile_cont over the events of the summary's range (of server `mcp` when the summary was filtered by it).
 */
export async function percentileErrors(
  db: Db,
  summary: SummaryPercentiles,
  mcp?: string,
): Promise<PercentileError> {
  const F = tsParam(new Date(summary.range.from));
  const T = tsParam(new Date(summary.range.to));
  const server = mcp === undefined ? sql`true` : sql`mcp_name = ${mcp}`;
  const unit = sql.raw(`'${summary.range.bucket}'`);
  const pc = sql.raw('percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY duration_ms)');
  const rows = await queryRows(
    db,
    sql`SELECT 'totals' AS k, to_json(${pc}) AS p FROM observability_events
        WHERE event_time >= ${F} AND event_time < ${T} AND ${server}
      UNION ALL SELECT 'tool ' || mcp_name || '/' || tool, to_json(${pc}) FROM observability_events
        WHERE event_time >= ${F} AND event_time < ${T} AND ${server} GROUP BY mcp_name, tool
      UNION ALL SELECT 'bucket ' || to_char(date_trunc(${unit}, event_time AT TIME ZONE 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          to_json(${pc}) FROM observability_events
        WHERE event_time >= ${F} AND event_time < ${T} AND ${server} GROUP BY date_trunc(${unit}, event_time AT TIME ZONE 'UTC')`,
  );
  const exact = new Map(
    rows.map((r) => [r.k, (typeof r.p === 'string' ? JSON.parse(r.p) : r.p) as number[]]),
  );
  const reported: Array<[string, Percentiles]> = [
    ['totals', percentilesOf(summary.totals)],
    ...summary.top.tools.map((t): [string, Percentiles] => [
      `tool ${String(t.mcp_name)}/${String(t.tool)}`,
      percentilesOf(t),
    ]),
    ...summary.series
      .map((b): [string, Percentiles] => [`bucket ${String(b.bucket)}`, percentilesOf(b)])
      .filter(([, b]) => b.duration_p50_ms !== null),
  ];
  const result: PercentileError = { worst: 0, where: 'nothing compared', compared: 0 };
  for (const [k, got] of reported) {
    const want = exact.get(k);
    if (!want) throw new Error(`the summary reports ${k}, which has no events in the range`);
    P.forEach((p, i) => {
      const e = relativeError(got[p], want[i] as number);
      result.compared++;
      if (e >= result.worst)
        Object.assign(result, { worst: e, where: `${k} ${p}: ${got[p]} vs exact ${want[i]}` });
    });
  }
  return result;
}
