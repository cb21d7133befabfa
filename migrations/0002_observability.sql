-- Admin observability (issue 4): rollups of observability_events maintained at ingest, and the indexes of the
-- event browser. Design and figures: shared/domain/observability.ts.
-- h1..h64: a log histogram of durations; h<b> counts durations in (1.25^(b-2), 1.25^(b-1)] ms, h1 those <= 1 ms
-- (obs_duration_bucket). A percentile read from it is at most 25 % above the exact value. Empty buckets and the
-- histogram of actor rows are NULL, which costs one bit of the null bitmap instead of 4 bytes.
CREATE TABLE IF NOT EXISTS observability_rollups (
  grain text NOT NULL,
  kind text NOT NULL,
  bucket timestamptz NOT NULL,
  agent_type text NOT NULL DEFAULT '',
  mcp_name text NOT NULL DEFAULT '',
  tool text NOT NULL DEFAULT '',
  event_type text NOT NULL DEFAULT '',
  result text NOT NULL DEFAULT '',
  deny_code text NOT NULL DEFAULT '',
  rule_applied text NOT NULL DEFAULT '',
  model text NOT NULL DEFAULT '',
  actor_email text NOT NULL DEFAULT '',
  group_name text NOT NULL DEFAULT '',
  calls bigint NOT NULL DEFAULT 0,
  denied bigint NOT NULL DEFAULT 0,
  errors bigint NOT NULL DEFAULT 0,
  tokens_in bigint NOT NULL DEFAULT 0,
  tokens_out bigint NOT NULL DEFAULT 0,
  duration_sum bigint NOT NULL DEFAULT 0,
  duration_max integer NOT NULL DEFAULT 0,
  h1 integer,
  h2 integer,
  h3 integer,
  h4 integer,
  h5 integer,
  h6 integer,
  h7 integer,
  h8 integer,
  h9 integer,
  h10 integer,
  h11 integer,
  h12 integer,
  h13 integer,
  h14 integer,
  h15 integer,
  h16 integer,
  h17 integer,
  h18 integer,
  h19 integer,
  h20 integer,
  h21 integer,
  h22 integer,
  h23 integer,
  h24 integer,
  h25 integer,
  h26 integer,
  h27 integer,
  h28 integer,
  h29 integer,
  h30 integer,
  h31 integer,
  h32 integer,
  h33 integer,
  h34 integer,
  h35 integer,
  h36 integer,
  h37 integer,
  h38 integer,
  h39 integer,
  h40 integer,
  h41 integer,
  h42 integer,
  h43 integer,
  h44 integer,
  h45 integer,
  h46 integer,
  h47 integer,
  h48 integer,
  h49 integer,
  h50 integer,
  h51 integer,
  h52 integer,
  h53 integer,
  h54 integer,
  h55 integer,
  h56 integer,
  h57 integer,
  h58 integer,
  h59 integer,
  h60 integer,
  h61 integer,
  h62 integer,
  h63 integer,
  h64 integer,
  CONSTRAINT observability_rollups_grain_check CHECK (grain in ('hour', 'day', 'week')),
  CONSTRAINT observability_rollups_kind_check CHECK (kind in ('call', 'actor'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS observability_rollups_key ON observability_rollups (grain, kind, bucket, agent_type,
  mcp_name, tool, event_type, result, deny_code, rule_applied, model, actor_email, group_name);
--> statement-breakpoint
-- kind and grain are correlated (actor rows are daily only): without this the planner misjudges the call rows of a
-- range and scans the table.
CREATE STATISTICS IF NOT EXISTS observability_rollups_kind_grain (dependencies, mcv) ON kind, grain
  FROM observability_rollups;
--> statement-breakpoint
-- The actor section of the summary: an index-only scan of one range of days and weeks.
CREATE INDEX IF NOT EXISTS observability_rollups_actor_idx ON observability_rollups (bucket, actor_email)
  INCLUDE (grain, group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max)
  WHERE kind = 'actor';
--> statement-breakpoint
-- Small range queries: parallel workers cost more to start than they save.
ALTER TABLE observability_rollups SET (parallel_workers = 0);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION obs_duration_bucket(ms integer) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN ms <= 1 THEN 1 ELSE least(64, ceil(ln(ms) / ln(1.25))::integer + 1) END
$$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_tool_time_idx
  ON observability_events (mcp_name, tool, event_time DESC, id DESC);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_agent_time_idx
  ON observability_events (agent_type, event_time DESC, id DESC);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_actor_time_idx
  ON observability_events (actor_email, event_time DESC, id DESC);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS observability_events_not_allowed_idx
  ON observability_events (result, event_time DESC, id DESC) WHERE result <> 'allowed';
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS inventory_mcps_current_idx ON inventory_mcps (name, device_id) WHERE removed_at IS NULL;
--> statement-breakpoint
-- Backfill: the rollups of the events stored before this migration (the same aggregate as rollupSelectSql in
-- shared/domain/observability-rollups.ts, which the ingest statement upserts).
INSERT INTO observability_rollups (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code,
  rule_applied, model, actor_email, group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum,
  duration_max, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64)
SELECT g.grain, 'call', date_trunc(g.grain, e.event_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', e.agent_type,
  e.mcp_name, e.tool, e.event_type, e.result, coalesce(e.deny_code, ''), coalesce(e.rule_applied, ''),
  coalesce(e.model, ''), '', '', count(*), count(*) FILTER (WHERE e.result = 'denied'),
  count(*) FILTER (WHERE e.result = 'error'), sum(e.tokens_in), sum(e.tokens_out), sum(e.duration_ms),
  max(e.duration_ms),
  nullif(count(*) FILTER (WHERE e.b = 1), 0), nullif(count(*) FILTER (WHERE e.b = 2), 0), nullif(count(*) FILTER (WHERE e.b = 3), 0), nullif(count(*) FILTER (WHERE e.b = 4), 0),
  nullif(count(*) FILTER (WHERE e.b = 5), 0), nullif(count(*) FILTER (WHERE e.b = 6), 0), nullif(count(*) FILTER (WHERE e.b = 7), 0), nullif(count(*) FILTER (WHERE e.b = 8), 0),
  nullif(count(*) FILTER (WHERE e.b = 9), 0), nullif(count(*) FILTER (WHERE e.b = 10), 0), nullif(count(*) FILTER (WHERE e.b = 11), 0), nullif(count(*) FILTER (WHERE e.b = 12), 0),
  nullif(count(*) FILTER (WHERE e.b = 13), 0), nullif(count(*) FILTER (WHERE e.b = 14), 0), nullif(count(*) FILTER (WHERE e.b = 15), 0), nullif(count(*) FILTER (WHERE e.b = 16), 0),
  nullif(count(*) FILTER (WHERE e.b = 17), 0), nullif(count(*) FILTER (WHERE e.b = 18), 0), nullif(count(*) FILTER (WHERE e.b = 19), 0), nullif(count(*) FILTER (WHERE e.b = 20), 0),
  nullif(count(*) FILTER (WHERE e.b = 21), 0), nullif(count(*) FILTER (WHERE e.b = 22), 0), nullif(count(*) FILTER (WHERE e.b = 23), 0), nullif(count(*) FILTER (WHERE e.b = 24), 0),
  nullif(count(*) FILTER (WHERE e.b = 25), 0), nullif(count(*) FILTER (WHERE e.b = 26), 0), nullif(count(*) FILTER (WHERE e.b = 27), 0), nullif(count(*) FILTER (WHERE e.b = 28), 0),
  nullif(count(*) FILTER (WHERE e.b = 29), 0), nullif(count(*) FILTER (WHERE e.b = 30), 0), nullif(count(*) FILTER (WHERE e.b = 31), 0), nullif(count(*) FILTER (WHERE e.b = 32), 0),
  nullif(count(*) FILTER (WHERE e.b = 33), 0), nullif(count(*) FILTER (WHERE e.b = 34), 0), nullif(count(*) FILTER (WHERE e.b = 35), 0), nullif(count(*) FILTER (WHERE e.b = 36), 0),
  nullif(count(*) FILTER (WHERE e.b = 37), 0), nullif(count(*) FILTER (WHERE e.b = 38), 0), nullif(count(*) FILTER (WHERE e.b = 39), 0), nullif(count(*) FILTER (WHERE e.b = 40), 0),
  nullif(count(*) FILTER (WHERE e.b = 41), 0), nullif(count(*) FILTER (WHERE e.b = 42), 0), nullif(count(*) FILTER (WHERE e.b = 43), 0), nullif(count(*) FILTER (WHERE e.b = 44), 0),
  nullif(count(*) FILTER (WHERE e.b = 45), 0), nullif(count(*) FILTER (WHERE e.b = 46), 0), nullif(count(*) FILTER (WHERE e.b = 47), 0), nullif(count(*) FILTER (WHERE e.b = 48), 0),
  nullif(count(*) FILTER (WHERE e.b = 49), 0), nullif(count(*) FILTER (WHERE e.b = 50), 0), nullif(count(*) FILTER (WHERE e.b = 51), 0), nullif(count(*) FILTER (WHERE e.b = 52), 0),
  nullif(count(*) FILTER (WHERE e.b = 53), 0), nullif(count(*) FILTER (WHERE e.b = 54), 0), nullif(count(*) FILTER (WHERE e.b = 55), 0), nullif(count(*) FILTER (WHERE e.b = 56), 0),
  nullif(count(*) FILTER (WHERE e.b = 57), 0), nullif(count(*) FILTER (WHERE e.b = 58), 0), nullif(count(*) FILTER (WHERE e.b = 59), 0), nullif(count(*) FILTER (WHERE e.b = 60), 0),
  nullif(count(*) FILTER (WHERE e.b = 61), 0), nullif(count(*) FILTER (WHERE e.b = 62), 0), nullif(count(*) FILTER (WHERE e.b = 63), 0), nullif(count(*) FILTER (WHERE e.b = 64), 0)
FROM (SELECT *, obs_duration_bucket(duration_ms) AS b FROM observability_events) e
  CROSS JOIN (VALUES ('hour'), ('day'), ('week')) AS g(grain)
GROUP BY 1, 3, 4, 5, 6, 7, 8, 9, 10, 11
UNION ALL
SELECT g.grain, 'actor', date_trunc(g.grain, e.event_time AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', '', '', '', '', '', '',
  '', '', coalesce(e.actor_email, ''), coalesce(e.group_name, ''), count(*),
  count(*) FILTER (WHERE e.result = 'denied'), count(*) FILTER (WHERE e.result = 'error'), sum(e.tokens_in),
  sum(e.tokens_out), sum(e.duration_ms), max(e.duration_ms), NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer
FROM observability_events e CROSS JOIN (VALUES ('day'), ('week')) AS g(grain)
GROUP BY 1, 3, 12, 13
