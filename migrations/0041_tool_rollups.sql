ALTER TABLE "observability_rollups" DROP CONSTRAINT "observability_rollups_kind_check";--> statement-breakpoint
ALTER TABLE "observability_rollups" ADD CONSTRAINT "observability_rollups_kind_check" CHECK ("observability_rollups"."kind" in ('call', 'tool', 'actor'));--> statement-breakpoint
-- observability_fold: generated from shared/observability/rollups/rollups.ts (foldFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION observability_fold(max_events bigint, wait boolean, OUT folded bigint, OUT more boolean)
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
  WITH ins AS MATERIALIZED (SELECT event_time, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
      actor_email, group_name, tokens_in, tokens_out, duration_ms FROM observability_events
        WHERE (ingest_xid >= lo AND ingest_xid < cut AND ingest_xid <> ALL (running))
          OR ingest_xid = ANY (finished)),
      roll AS (INSERT INTO observability_rollups (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max,
  duration_sketch)
    SELECT * FROM (SELECT z.grain, z.kind, z.bucket, z.agent_type, z.mcp_name, z.tool, z.event_type, z.result, z.deny_code, z.rule_applied, z.model, z.actor_email, z.group_name, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, coalesce(sum(z.duration_sum), 0)::bigint AS duration_sum, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain AS grain, g.kind AS kind, (CASE WHEN g.grain = '6h' THEN date_trunc('day', r.bucket AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM r.bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, r.bucket AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, CASE WHEN g.kind = 'tool' THEN '' ELSE r.agent_type END AS agent_type, r.mcp_name AS mcp_name, r.tool AS tool, CASE WHEN g.kind = 'tool' THEN '' ELSE r.event_type END AS event_type, CASE WHEN g.kind = 'tool' THEN '' ELSE r.result END AS result, CASE WHEN g.kind = 'tool' THEN '' ELSE r.deny_code END AS deny_code, CASE WHEN g.kind = 'tool' THEN '' ELSE r.rule_applied END AS rule_applied, CASE WHEN g.kind = 'tool' THEN '' ELSE r.model END AS model, CASE WHEN g.kind = 'tool' THEN '' ELSE r.actor_email END AS actor_email, CASE WHEN g.kind = 'tool' THEN '' ELSE r.group_name END AS group_name, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, sum(r.duration_sum) FILTER (WHERE u.o IS NULL OR u.o = 1) AS duration_sum, max(r.duration_max) AS duration_max
      FROM (SELECT c.grain, 'call' AS kind, c.bucket, c.agent_type, c.mcp_name, c.tool, c.event_type, c.result, c.deny_code, c.rule_applied, c.model,
      '' AS actor_email, '' AS group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max, c.duration_sketch
    FROM (SELECT x.grain, x.bucket, x.agent_type, x.mcp_name, x.tool, x.event_type, x.result, x.deny_code, x.rule_applied, x.model, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, sum(x.ds)::bigint AS duration_sum,
      max(x.dm)::int AS duration_max, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain AS grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.agent_type, s.mcp_name, s.tool, s.event_type, s.result,
        coalesce(s.deny_code, '') AS deny_code, coalesce(s.rule_applied, '') AS rule_applied,
        coalesce(s.model, '') AS model, obs_sketch_key(s.duration_ms) AS b, count(*) AS n,
        sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt, sum(s.duration_ms) AS ds, max(s.duration_ms) AS dm
      FROM ins AS s CROSS JOIN (VALUES ('hour')) AS g(grain)
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) AS x
    GROUP BY x.grain, x.bucket, x.agent_type, x.mcp_name, x.tool, x.event_type, x.result, x.deny_code, x.rule_applied, x.model) AS c UNION ALL SELECT a.grain, 'actor' AS kind, a.bucket, '' AS agent_type, '' AS mcp_name, '' AS tool,
      '' AS event_type, '' AS result, '' AS deny_code, '' AS rule_applied, '' AS model, a.actor_email, a.group_name,
      calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max, NULL::integer[] AS duration_sketch
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM ins AS s CROSS JOIN (VALUES ('day')) AS g(grain)
    GROUP BY 1, 2, 3, 4) AS a) AS r JOIN (VALUES ('call', 'hour'), ('call', '6h'), ('call', 'day'), ('call', 'week'), ('tool', 'hour'), ('tool', '6h'), ('tool', 'day'), ('tool', 'week'), ('actor', 'day'), ('actor', 'week')) AS g(kind, grain) ON g.kind = r.kind OR (g.kind = 'tool' AND r.kind = 'call') LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14) AS z
    GROUP BY z.grain, z.kind, z.bucket, z.agent_type, z.mcp_name, z.tool, z.event_type, z.result, z.deny_code, z.rule_applied, z.model, z.actor_email, z.group_name) AS x ORDER BY grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name
    ON CONFLICT (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name) DO UPDATE SET calls = observability_rollups.calls + EXCLUDED.calls, denied = observability_rollups.denied + EXCLUDED.denied, errors = observability_rollups.errors + EXCLUDED.errors, tokens_in = observability_rollups.tokens_in + EXCLUDED.tokens_in, tokens_out = observability_rollups.tokens_out + EXCLUDED.tokens_out, duration_sum = observability_rollups.duration_sum + EXCLUDED.duration_sum, duration_sketch = obs_sketch_add(observability_rollups.duration_sketch, EXCLUDED.duration_sketch),
      duration_max = greatest(observability_rollups.duration_max, EXCLUDED.duration_max)
    RETURNING 1),
      sr AS MATERIALIZED (SELECT z.grain, z.bucket, z.event_type, z.result, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain AS grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', r.bucket AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM r.bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, r.bucket AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, r.event_type AS event_type, r.result AS result, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, max(r.duration_max) AS duration_max
      FROM (SELECT x.grain, x.bucket, x.event_type, x.result, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, max(x.dm)::int AS duration_max, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.event_type, s.result,
        obs_sketch_key(s.duration_ms) AS b, count(*) AS n, sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt,
        max(s.duration_ms) AS dm
      FROM ins AS s CROSS JOIN (VALUES ('minute')) AS g(grain)
      GROUP BY 1, 2, 3, 4, 5) AS x
    GROUP BY x.grain, x.bucket, x.event_type, x.result) AS r CROSS JOIN (VALUES ('minute'), ('hour'), ('day')) AS g(grain) LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2, 3, 4, 5) AS z
    GROUP BY z.grain, z.bucket, z.event_type, z.result),
      series AS (INSERT INTO observability_series (grain, bucket, event_type, result, calls, denied, errors, tokens_in, tokens_out,
  duration_max, duration_sketch)
    SELECT * FROM sr ORDER BY 1, 2, 3, 4
    ON CONFLICT (grain, bucket, event_type, result) DO UPDATE SET calls = observability_series.calls + EXCLUDED.calls, denied = observability_series.denied + EXCLUDED.denied, errors = observability_series.errors + EXCLUDED.errors, tokens_in = observability_series.tokens_in + EXCLUDED.tokens_in, tokens_out = observability_series.tokens_out + EXCLUDED.tokens_out, duration_max = greatest(observability_series.duration_max, EXCLUDED.duration_max), duration_sketch = obs_sketch_add(observability_series.duration_sketch, EXCLUDED.duration_sketch)
    RETURNING 1),
      totals AS (INSERT INTO observability_series_totals (grain, bucket, calls, denied, errors, tokens_in, tokens_out, duration_max,
  duration_sketch)
    SELECT * FROM (SELECT z.grain, z.bucket, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT r.grain AS grain, r.bucket AS bucket, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, max(r.duration_max) AS duration_max
      FROM sr AS r LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2, 3) AS z
    GROUP BY z.grain, z.bucket) AS x ORDER BY 1, 2
    ON CONFLICT (grain, bucket) DO UPDATE SET calls = observability_series_totals.calls + EXCLUDED.calls, denied = observability_series_totals.denied + EXCLUDED.denied, errors = observability_series_totals.errors + EXCLUDED.errors, tokens_in = observability_series_totals.tokens_in + EXCLUDED.tokens_in, tokens_out = observability_series_totals.tokens_out + EXCLUDED.tokens_out, duration_max = greatest(observability_series_totals.duration_max, EXCLUDED.duration_max), duration_sketch = obs_sketch_add(observability_series_totals.duration_sketch, EXCLUDED.duration_sketch)
    RETURNING 1)
    SELECT count(*) INTO folded FROM ins;
  UPDATE observability_fold_state SET next_xid = cut, folded_at = now(), events_folded = events_folded + folded,
    pending_xids = ARRAY(SELECT x FROM unnest(waiting) AS x WHERE x = ANY (running)
      UNION ALL SELECT x FROM unnest(running) AS x WHERE x >= lo AND x < cut ORDER BY 1);
END
$fold$;
--> statement-breakpoint
-- Tool rows of the stored call rows, each bucket's summed per MCP server and tool (the fold adds them from now on).
INSERT INTO observability_rollups (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max,
  duration_sketch)
SELECT * FROM (SELECT z.grain, z.kind, z.bucket, z.agent_type, z.mcp_name, z.tool, z.event_type, z.result, z.deny_code, z.rule_applied, z.model, z.actor_email, z.group_name, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, coalesce(sum(z.duration_sum), 0)::bigint AS duration_sum, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT r.grain AS grain, 'tool'::text AS kind, r.bucket AS bucket, ''::text AS agent_type, r.mcp_name AS mcp_name, r.tool AS tool, ''::text AS event_type, ''::text AS result, ''::text AS deny_code, ''::text AS rule_applied, ''::text AS model, ''::text AS actor_email, ''::text AS group_name, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, sum(r.duration_sum) FILTER (WHERE u.o IS NULL OR u.o = 1) AS duration_sum, max(r.duration_max) AS duration_max
      FROM (SELECT * FROM observability_rollups WHERE kind = 'call') AS r LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14) AS z
    GROUP BY z.grain, z.kind, z.bucket, z.agent_type, z.mcp_name, z.tool, z.event_type, z.result, z.deny_code, z.rule_applied, z.model, z.actor_email, z.group_name) AS x ORDER BY grain, bucket;
