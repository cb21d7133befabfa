-- Admin observability, second step (issue 4). Design and figures: the top of shared/domain/observability.ts.
--
-- observability_series: calls, denies, errors and tokens per minute, hour and day, keyed only by event type and
-- result (at most 9 rows a bucket, 4 in practice). It serves the summary's time series: bucket=minute (no other
-- rollup has minutes) and the hour / day series without call-key filters, instead of summing the ~230 call rows of
-- every bucket. Maintained by the ingest statement like observability_rollups (seriesUpsertSql); minute rows are
-- small enough to keep (~2M rows a year at 4 a minute).
CREATE TABLE IF NOT EXISTS observability_series (
  grain text NOT NULL,
  bucket timestamptz NOT NULL,
  event_type text NOT NULL,
  result text NOT NULL,
  calls bigint NOT NULL DEFAULT 0,
  denied bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  tokens_in bigint NOT NULL DEFAULT 0,
  tokens_out bigint NOT NULL DEFAULT 0,
  CONSTRAINT observability_series_pkey PRIMARY KEY (grain, bucket, event_type, result),
  CONSTRAINT observability_series_grain_check CHECK (grain in ('minute', 'hour', 'day'))
) WITH (fillfactor = 80);
--> statement-breakpoint
-- Backfill: minute rows from the events, hour and day rows from the minute rows (buckets nest, so the sums are exact;
-- the same aggregate as seriesSelectSql in shared/domain/observability-rollups.ts).
INSERT INTO observability_series (grain, bucket, event_type, result, calls, denied, errors, tokens_in, tokens_out)
SELECT 'minute', date_trunc('minute', event_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', event_type, result,
  count(*), count(*) FILTER (WHERE result = 'denied'), count(*) FILTER (WHERE result = 'error'), sum(tokens_in),
  sum(tokens_out)
FROM observability_events GROUP BY 2, 3, 4;
--> statement-breakpoint
INSERT INTO observability_series (grain, bucket, event_type, result, calls, denied, errors, tokens_in, tokens_out)
SELECT g.grain, date_trunc(g.grain, s.bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', s.event_type, s.result,
  sum(s.calls), sum(s.denied), sum(s.errors), sum(s.tokens_in), sum(s.tokens_out)
FROM observability_series s CROSS JOIN (VALUES ('hour'), ('day')) AS g(grain)
WHERE s.grain = 'minute' GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
-- Quarter-day (6-hour) call rows: a 24-hour range reads at most 5 + 3 + 5 rows per call key (hours, quarter days,
-- hours) instead of 25 hourly ones. Backfill: summed from the hourly rows (they nest exactly).
ALTER TABLE observability_rollups DROP CONSTRAINT IF EXISTS observability_rollups_grain_check;
--> statement-breakpoint
ALTER TABLE observability_rollups ADD CONSTRAINT observability_rollups_grain_check
  CHECK (grain in ('hour', '6h', 'day', 'week'));
--> statement-breakpoint
INSERT INTO observability_rollups (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, actor_email, group_name,
  calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64)
SELECT '6h', 'call', (date_trunc('day', bucket AT TIME ZONE 'UTC')
    + (floor(extract(hour FROM bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours') AT TIME ZONE 'UTC',
  agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, actor_email, group_name, sum(calls)::bigint, sum(denied)::bigint, sum(errors)::bigint,
  sum(tokens_in)::bigint, sum(tokens_out)::bigint, sum(duration_sum)::bigint, max(duration_max), sum(h1)::int, sum(h2)::int, sum(h3)::int, sum(h4)::int, sum(h5)::int, sum(h6)::int, sum(h7)::int, sum(h8)::int, sum(h9)::int, sum(h10)::int, sum(h11)::int, sum(h12)::int, sum(h13)::int, sum(h14)::int, sum(h15)::int, sum(h16)::int, sum(h17)::int, sum(h18)::int, sum(h19)::int, sum(h20)::int, sum(h21)::int, sum(h22)::int, sum(h23)::int, sum(h24)::int, sum(h25)::int, sum(h26)::int, sum(h27)::int, sum(h28)::int, sum(h29)::int, sum(h30)::int, sum(h31)::int, sum(h32)::int, sum(h33)::int, sum(h34)::int, sum(h35)::int, sum(h36)::int, sum(h37)::int, sum(h38)::int, sum(h39)::int, sum(h40)::int, sum(h41)::int, sum(h42)::int, sum(h43)::int, sum(h44)::int, sum(h45)::int, sum(h46)::int, sum(h47)::int, sum(h48)::int, sum(h49)::int, sum(h50)::int, sum(h51)::int, sum(h52)::int, sum(h53)::int, sum(h54)::int, sum(h55)::int, sum(h56)::int, sum(h57)::int, sum(h58)::int, sum(h59)::int, sum(h60)::int, sum(h61)::int, sum(h62)::int, sum(h63)::int, sum(h64)::int
FROM observability_rollups WHERE kind = 'call' AND grain = 'hour'
GROUP BY 3, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, actor_email, group_name;
--> statement-breakpoint
-- The actor section of the summary: one index range scan per grain (weeks inside the range, days around them). It
-- replaces the index of 0002, which the planner could not use per grain and which INCLUDEd the measures: an index on
-- a column an upsert changes makes every update a new tuple with new entries in every index (no HOT update).
CREATE INDEX IF NOT EXISTS observability_rollups_actor_grain_idx ON observability_rollups (grain, bucket, actor_email)
  WHERE kind = 'actor';
--> statement-breakpoint
DROP INDEX IF EXISTS observability_rollups_actor_idx;
--> statement-breakpoint
-- Room on each page for the HOT updates of the ingest upserts (the rows of a bucket then stay together).
ALTER TABLE observability_rollups SET (fillfactor = 80);
--> statement-breakpoint
-- The summary sums ~6k call rows per call key (8 columns, ~600 distinct combinations): without the combined
-- distinct count the planner expects ten times more groups and sorts instead of hashing.
CREATE STATISTICS IF NOT EXISTS observability_rollups_call_key (ndistinct)
  ON agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model FROM observability_rollups;
--> statement-breakpoint
-- Event browser. Pages are ORDER BY event_time DESC, id DESC NULLS LAST: the order of the time and device indexes of
-- 0000 (drizzle's default for DESC). The indexes of 0002 used NULLS FIRST, so no page could walk the time or device
-- index in order (the planner does not use NOT NULL to equate the two); they are rebuilt here with NULLS LAST.
DROP INDEX IF EXISTS observability_events_tool_time_idx;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_tool_time_idx
  ON observability_events (mcp_name, tool, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
DROP INDEX IF EXISTS observability_events_agent_time_idx;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_agent_time_idx
  ON observability_events (agent_type, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
DROP INDEX IF EXISTS observability_events_actor_time_idx;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_actor_time_idx
  ON observability_events (actor_email, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
DROP INDEX IF EXISTS observability_events_not_allowed_idx;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_not_allowed_idx
  ON observability_events (result, event_time DESC NULLS LAST, id DESC NULLS LAST) WHERE result <> 'allowed';
--> statement-breakpoint
-- Deny code: the first filter of an investigation, and rare; only denied events carry one, so the index is small.
CREATE INDEX IF NOT EXISTS observability_events_deny_code_idx
  ON observability_events (deny_code, event_time DESC NULLS LAST, id DESC NULLS LAST) WHERE deny_code IS NOT NULL;
--> statement-breakpoint
-- Free text (q): only events with a deny reason or an error message can match, so a q filter walks this index (a
-- few percent of the events) instead of every event of the range.
CREATE INDEX IF NOT EXISTS observability_events_text_idx
  ON observability_events (event_time DESC NULLS LAST, id DESC NULLS LAST)
  WHERE deny_reason IS NOT NULL OR error_message IS NOT NULL;
