-- observability_fold: generated from shared/domain/observability-rollups.ts (foldFunctionSql) by `npm run db:functions`; do not edit.
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
  h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64)
    SELECT * FROM (SELECT g.grain, r.kind, (CASE WHEN g.grain = '6h' THEN date_trunc('day', r.bucket AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM r.bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, r.bucket AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, r.agent_type, r.mcp_name, r.tool, r.event_type, r.result, r.deny_code, r.rule_applied, r.model, r.actor_email, r.group_name,
      sum(r.calls)::bigint, sum(r.denied)::bigint, sum(r.errors)::bigint, sum(r.tokens_in)::bigint, sum(r.tokens_out)::bigint, sum(r.duration_sum)::bigint, max(r.duration_max)::int, sum(r.h1)::int, sum(r.h2)::int, sum(r.h3)::int, sum(r.h4)::int, sum(r.h5)::int, sum(r.h6)::int, sum(r.h7)::int, sum(r.h8)::int, sum(r.h9)::int, sum(r.h10)::int, sum(r.h11)::int, sum(r.h12)::int, sum(r.h13)::int, sum(r.h14)::int, sum(r.h15)::int, sum(r.h16)::int, sum(r.h17)::int, sum(r.h18)::int, sum(r.h19)::int, sum(r.h20)::int, sum(r.h21)::int, sum(r.h22)::int, sum(r.h23)::int, sum(r.h24)::int, sum(r.h25)::int, sum(r.h26)::int, sum(r.h27)::int, sum(r.h28)::int, sum(r.h29)::int, sum(r.h30)::int, sum(r.h31)::int, sum(r.h32)::int, sum(r.h33)::int, sum(r.h34)::int, sum(r.h35)::int, sum(r.h36)::int, sum(r.h37)::int, sum(r.h38)::int, sum(r.h39)::int, sum(r.h40)::int, sum(r.h41)::int, sum(r.h42)::int, sum(r.h43)::int, sum(r.h44)::int, sum(r.h45)::int, sum(r.h46)::int, sum(r.h47)::int, sum(r.h48)::int, sum(r.h49)::int, sum(r.h50)::int, sum(r.h51)::int, sum(r.h52)::int, sum(r.h53)::int, sum(r.h54)::int, sum(r.h55)::int, sum(r.h56)::int, sum(r.h57)::int, sum(r.h58)::int, sum(r.h59)::int, sum(r.h60)::int, sum(r.h61)::int, sum(r.h62)::int, sum(r.h63)::int, sum(r.h64)::int
    FROM (SELECT c.grain, 'call' AS kind, c.bucket, c.agent_type, c.mcp_name, c.tool, c.event_type, c.result, c.deny_code, c.rule_applied, c.model,
      '' AS actor_email, '' AS group_name, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64
    FROM (SELECT x.grain, x.bucket, x.agent_type, x.mcp_name, x.tool, x.event_type, x.result, x.deny_code, x.rule_applied, x.model, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, sum(x.ds)::bigint AS duration_sum,
      max(x.dm)::int AS duration_max, (sum(x.n) FILTER (WHERE x.b = 1))::int AS h1, (sum(x.n) FILTER (WHERE x.b = 2))::int AS h2, (sum(x.n) FILTER (WHERE x.b = 3))::int AS h3, (sum(x.n) FILTER (WHERE x.b = 4))::int AS h4, (sum(x.n) FILTER (WHERE x.b = 5))::int AS h5, (sum(x.n) FILTER (WHERE x.b = 6))::int AS h6, (sum(x.n) FILTER (WHERE x.b = 7))::int AS h7, (sum(x.n) FILTER (WHERE x.b = 8))::int AS h8, (sum(x.n) FILTER (WHERE x.b = 9))::int AS h9, (sum(x.n) FILTER (WHERE x.b = 10))::int AS h10, (sum(x.n) FILTER (WHERE x.b = 11))::int AS h11, (sum(x.n) FILTER (WHERE x.b = 12))::int AS h12, (sum(x.n) FILTER (WHERE x.b = 13))::int AS h13, (sum(x.n) FILTER (WHERE x.b = 14))::int AS h14, (sum(x.n) FILTER (WHERE x.b = 15))::int AS h15, (sum(x.n) FILTER (WHERE x.b = 16))::int AS h16, (sum(x.n) FILTER (WHERE x.b = 17))::int AS h17, (sum(x.n) FILTER (WHERE x.b = 18))::int AS h18, (sum(x.n) FILTER (WHERE x.b = 19))::int AS h19, (sum(x.n) FILTER (WHERE x.b = 20))::int AS h20, (sum(x.n) FILTER (WHERE x.b = 21))::int AS h21, (sum(x.n) FILTER (WHERE x.b = 22))::int AS h22, (sum(x.n) FILTER (WHERE x.b = 23))::int AS h23, (sum(x.n) FILTER (WHERE x.b = 24))::int AS h24, (sum(x.n) FILTER (WHERE x.b = 25))::int AS h25, (sum(x.n) FILTER (WHERE x.b = 26))::int AS h26, (sum(x.n) FILTER (WHERE x.b = 27))::int AS h27, (sum(x.n) FILTER (WHERE x.b = 28))::int AS h28, (sum(x.n) FILTER (WHERE x.b = 29))::int AS h29, (sum(x.n) FILTER (WHERE x.b = 30))::int AS h30, (sum(x.n) FILTER (WHERE x.b = 31))::int AS h31, (sum(x.n) FILTER (WHERE x.b = 32))::int AS h32, (sum(x.n) FILTER (WHERE x.b = 33))::int AS h33, (sum(x.n) FILTER (WHERE x.b = 34))::int AS h34, (sum(x.n) FILTER (WHERE x.b = 35))::int AS h35, (sum(x.n) FILTER (WHERE x.b = 36))::int AS h36, (sum(x.n) FILTER (WHERE x.b = 37))::int AS h37, (sum(x.n) FILTER (WHERE x.b = 38))::int AS h38, (sum(x.n) FILTER (WHERE x.b = 39))::int AS h39, (sum(x.n) FILTER (WHERE x.b = 40))::int AS h40, (sum(x.n) FILTER (WHERE x.b = 41))::int AS h41, (sum(x.n) FILTER (WHERE x.b = 42))::int AS h42, (sum(x.n) FILTER (WHERE x.b = 43))::int AS h43, (sum(x.n) FILTER (WHERE x.b = 44))::int AS h44, (sum(x.n) FILTER (WHERE x.b = 45))::int AS h45, (sum(x.n) FILTER (WHERE x.b = 46))::int AS h46, (sum(x.n) FILTER (WHERE x.b = 47))::int AS h47, (sum(x.n) FILTER (WHERE x.b = 48))::int AS h48, (sum(x.n) FILTER (WHERE x.b = 49))::int AS h49, (sum(x.n) FILTER (WHERE x.b = 50))::int AS h50, (sum(x.n) FILTER (WHERE x.b = 51))::int AS h51, (sum(x.n) FILTER (WHERE x.b = 52))::int AS h52, (sum(x.n) FILTER (WHERE x.b = 53))::int AS h53, (sum(x.n) FILTER (WHERE x.b = 54))::int AS h54, (sum(x.n) FILTER (WHERE x.b = 55))::int AS h55, (sum(x.n) FILTER (WHERE x.b = 56))::int AS h56, (sum(x.n) FILTER (WHERE x.b = 57))::int AS h57, (sum(x.n) FILTER (WHERE x.b = 58))::int AS h58, (sum(x.n) FILTER (WHERE x.b = 59))::int AS h59, (sum(x.n) FILTER (WHERE x.b = 60))::int AS h60, (sum(x.n) FILTER (WHERE x.b = 61))::int AS h61, (sum(x.n) FILTER (WHERE x.b = 62))::int AS h62, (sum(x.n) FILTER (WHERE x.b = 63))::int AS h63, (sum(x.n) FILTER (WHERE x.b = 64))::int AS h64
    FROM (SELECT g.grain AS grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.agent_type, s.mcp_name, s.tool, s.event_type, s.result,
        coalesce(s.deny_code, '') AS deny_code, coalesce(s.rule_applied, '') AS rule_applied,
        coalesce(s.model, '') AS model, obs_duration_bucket(s.duration_ms) AS b, count(*) AS n,
        sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt, sum(s.duration_ms) AS ds, max(s.duration_ms) AS dm
      FROM ins AS s CROSS JOIN (VALUES ('hour')) AS g(grain)
      GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11) AS x
    GROUP BY x.grain, x.bucket, x.agent_type, x.mcp_name, x.tool, x.event_type, x.result, x.deny_code, x.rule_applied, x.model) AS c UNION ALL SELECT a.grain, 'actor' AS kind, a.bucket, '' AS agent_type, '' AS mcp_name, '' AS tool,
      '' AS event_type, '' AS result, '' AS deny_code, '' AS rule_applied, '' AS model, a.actor_email, a.group_name,
      calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max, NULL::int AS h1, NULL::int AS h2, NULL::int AS h3, NULL::int AS h4, NULL::int AS h5, NULL::int AS h6, NULL::int AS h7, NULL::int AS h8, NULL::int AS h9, NULL::int AS h10, NULL::int AS h11, NULL::int AS h12, NULL::int AS h13, NULL::int AS h14, NULL::int AS h15, NULL::int AS h16, NULL::int AS h17, NULL::int AS h18, NULL::int AS h19, NULL::int AS h20, NULL::int AS h21, NULL::int AS h22, NULL::int AS h23, NULL::int AS h24, NULL::int AS h25, NULL::int AS h26, NULL::int AS h27, NULL::int AS h28, NULL::int AS h29, NULL::int AS h30, NULL::int AS h31, NULL::int AS h32, NULL::int AS h33, NULL::int AS h34, NULL::int AS h35, NULL::int AS h36, NULL::int AS h37, NULL::int AS h38, NULL::int AS h39, NULL::int AS h40, NULL::int AS h41, NULL::int AS h42, NULL::int AS h43, NULL::int AS h44, NULL::int AS h45, NULL::int AS h46, NULL::int AS h47, NULL::int AS h48, NULL::int AS h49, NULL::int AS h50, NULL::int AS h51, NULL::int AS h52, NULL::int AS h53, NULL::int AS h54, NULL::int AS h55, NULL::int AS h56, NULL::int AS h57, NULL::int AS h58, NULL::int AS h59, NULL::int AS h60, NULL::int AS h61, NULL::int AS h62, NULL::int AS h63, NULL::int AS h64
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM ins AS s CROSS JOIN (VALUES ('day')) AS g(grain)
    GROUP BY 1, 2, 3, 4) AS a) AS r JOIN (VALUES ('call', 'hour'), ('call', '6h'), ('call', 'day'), ('call', 'week'), ('actor', 'day'), ('actor', 'week')) AS g(kind, grain) ON g.kind = r.kind
    GROUP BY 1, 2, 3, r.agent_type, r.mcp_name, r.tool, r.event_type, r.result, r.deny_code, r.rule_applied, r.model, r.actor_email, r.group_name) AS x ORDER BY grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name
    ON CONFLICT (grain, kind, bucket, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied,
  model, actor_email, group_name) DO UPDATE SET calls = observability_rollups.calls + EXCLUDED.calls, denied = observability_rollups.denied + EXCLUDED.denied, errors = observability_rollups.errors + EXCLUDED.errors, tokens_in = observability_rollups.tokens_in + EXCLUDED.tokens_in, tokens_out = observability_rollups.tokens_out + EXCLUDED.tokens_out, duration_sum = observability_rollups.duration_sum + EXCLUDED.duration_sum, h1 = nullif(coalesce(observability_rollups.h1, 0) + coalesce(EXCLUDED.h1, 0), 0), h2 = nullif(coalesce(observability_rollups.h2, 0) + coalesce(EXCLUDED.h2, 0), 0), h3 = nullif(coalesce(observability_rollups.h3, 0) + coalesce(EXCLUDED.h3, 0), 0), h4 = nullif(coalesce(observability_rollups.h4, 0) + coalesce(EXCLUDED.h4, 0), 0), h5 = nullif(coalesce(observability_rollups.h5, 0) + coalesce(EXCLUDED.h5, 0), 0), h6 = nullif(coalesce(observability_rollups.h6, 0) + coalesce(EXCLUDED.h6, 0), 0), h7 = nullif(coalesce(observability_rollups.h7, 0) + coalesce(EXCLUDED.h7, 0), 0), h8 = nullif(coalesce(observability_rollups.h8, 0) + coalesce(EXCLUDED.h8, 0), 0), h9 = nullif(coalesce(observability_rollups.h9, 0) + coalesce(EXCLUDED.h9, 0), 0), h10 = nullif(coalesce(observability_rollups.h10, 0) + coalesce(EXCLUDED.h10, 0), 0), h11 = nullif(coalesce(observability_rollups.h11, 0) + coalesce(EXCLUDED.h11, 0), 0), h12 = nullif(coalesce(observability_rollups.h12, 0) + coalesce(EXCLUDED.h12, 0), 0), h13 = nullif(coalesce(observability_rollups.h13, 0) + coalesce(EXCLUDED.h13, 0), 0), h14 = nullif(coalesce(observability_rollups.h14, 0) + coalesce(EXCLUDED.h14, 0), 0), h15 = nullif(coalesce(observability_rollups.h15, 0) + coalesce(EXCLUDED.h15, 0), 0), h16 = nullif(coalesce(observability_rollups.h16, 0) + coalesce(EXCLUDED.h16, 0), 0), h17 = nullif(coalesce(observability_rollups.h17, 0) + coalesce(EXCLUDED.h17, 0), 0), h18 = nullif(coalesce(observability_rollups.h18, 0) + coalesce(EXCLUDED.h18, 0), 0), h19 = nullif(coalesce(observability_rollups.h19, 0) + coalesce(EXCLUDED.h19, 0), 0), h20 = nullif(coalesce(observability_rollups.h20, 0) + coalesce(EXCLUDED.h20, 0), 0), h21 = nullif(coalesce(observability_rollups.h21, 0) + coalesce(EXCLUDED.h21, 0), 0), h22 = nullif(coalesce(observability_rollups.h22, 0) + coalesce(EXCLUDED.h22, 0), 0), h23 = nullif(coalesce(observability_rollups.h23, 0) + coalesce(EXCLUDED.h23, 0), 0), h24 = nullif(coalesce(observability_rollups.h24, 0) + coalesce(EXCLUDED.h24, 0), 0), h25 = nullif(coalesce(observability_rollups.h25, 0) + coalesce(EXCLUDED.h25, 0), 0), h26 = nullif(coalesce(observability_rollups.h26, 0) + coalesce(EXCLUDED.h26, 0), 0), h27 = nullif(coalesce(observability_rollups.h27, 0) + coalesce(EXCLUDED.h27, 0), 0), h28 = nullif(coalesce(observability_rollups.h28, 0) + coalesce(EXCLUDED.h28, 0), 0), h29 = nullif(coalesce(observability_rollups.h29, 0) + coalesce(EXCLUDED.h29, 0), 0), h30 = nullif(coalesce(observability_rollups.h30, 0) + coalesce(EXCLUDED.h30, 0), 0), h31 = nullif(coalesce(observability_rollups.h31, 0) + coalesce(EXCLUDED.h31, 0), 0), h32 = nullif(coalesce(observability_rollups.h32, 0) + coalesce(EXCLUDED.h32, 0), 0), h33 = nullif(coalesce(observability_rollups.h33, 0) + coalesce(EXCLUDED.h33, 0), 0), h34 = nullif(coalesce(observability_rollups.h34, 0) + coalesce(EXCLUDED.h34, 0), 0), h35 = nullif(coalesce(observability_rollups.h35, 0) + coalesce(EXCLUDED.h35, 0), 0), h36 = nullif(coalesce(observability_rollups.h36, 0) + coalesce(EXCLUDED.h36, 0), 0), h37 = nullif(coalesce(observability_rollups.h37, 0) + coalesce(EXCLUDED.h37, 0), 0), h38 = nullif(coalesce(observability_rollups.h38, 0) + coalesce(EXCLUDED.h38, 0), 0), h39 = nullif(coalesce(observability_rollups.h39, 0) + coalesce(EXCLUDED.h39, 0), 0), h40 = nullif(coalesce(observability_rollups.h40, 0) + coalesce(EXCLUDED.h40, 0), 0), h41 = nullif(coalesce(observability_rollups.h41, 0) + coalesce(EXCLUDED.h41, 0), 0), h42 = nullif(coalesce(observability_rollups.h42, 0) + coalesce(EXCLUDED.h42, 0), 0), h43 = nullif(coalesce(observability_rollups.h43, 0) + coalesce(EXCLUDED.h43, 0), 0), h44 = nullif(coalesce(observability_rollups.h44, 0) + coalesce(EXCLUDED.h44, 0), 0), h45 = nullif(coalesce(observability_rollups.h45, 0) + coalesce(EXCLUDED.h45, 0), 0), h46 = nullif(coalesce(observability_rollups.h46, 0) + coalesce(EXCLUDED.h46, 0), 0), h47 = nullif(coalesce(observability_rollups.h47, 0) + coalesce(EXCLUDED.h47, 0), 0), h48 = nullif(coalesce(observability_rollups.h48, 0) + coalesce(EXCLUDED.h48, 0), 0), h49 = nullif(coalesce(observability_rollups.h49, 0) + coalesce(EXCLUDED.h49, 0), 0), h50 = nullif(coalesce(observability_rollups.h50, 0) + coalesce(EXCLUDED.h50, 0), 0), h51 = nullif(coalesce(observability_rollups.h51, 0) + coalesce(EXCLUDED.h51, 0), 0), h52 = nullif(coalesce(observability_rollups.h52, 0) + coalesce(EXCLUDED.h52, 0), 0), h53 = nullif(coalesce(observability_rollups.h53, 0) + coalesce(EXCLUDED.h53, 0), 0), h54 = nullif(coalesce(observability_rollups.h54, 0) + coalesce(EXCLUDED.h54, 0), 0), h55 = nullif(coalesce(observability_rollups.h55, 0) + coalesce(EXCLUDED.h55, 0), 0), h56 = nullif(coalesce(observability_rollups.h56, 0) + coalesce(EXCLUDED.h56, 0), 0), h57 = nullif(coalesce(observability_rollups.h57, 0) + coalesce(EXCLUDED.h57, 0), 0), h58 = nullif(coalesce(observability_rollups.h58, 0) + coalesce(EXCLUDED.h58, 0), 0), h59 = nullif(coalesce(observability_rollups.h59, 0) + coalesce(EXCLUDED.h59, 0), 0), h60 = nullif(coalesce(observability_rollups.h60, 0) + coalesce(EXCLUDED.h60, 0), 0), h61 = nullif(coalesce(observability_rollups.h61, 0) + coalesce(EXCLUDED.h61, 0), 0), h62 = nullif(coalesce(observability_rollups.h62, 0) + coalesce(EXCLUDED.h62, 0), 0), h63 = nullif(coalesce(observability_rollups.h63, 0) + coalesce(EXCLUDED.h63, 0), 0), h64 = nullif(coalesce(observability_rollups.h64, 0) + coalesce(EXCLUDED.h64, 0), 0),
      duration_max = greatest(observability_rollups.duration_max, EXCLUDED.duration_max)
    RETURNING 1),
      series AS (INSERT INTO observability_series (grain, bucket, event_type, result, calls, denied, errors, tokens_in, tokens_out)
    SELECT * FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', r.bucket AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM r.bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, r.bucket AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, r.event_type, r.result,
      sum(r.calls)::bigint, sum(r.denied)::bigint, sum(r.errors)::bigint, sum(r.tokens_in)::bigint,
      sum(r.tokens_out)::bigint
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.event_type, s.result,
      count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
      count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
      sum(s.tokens_out)::bigint AS tokens_out
    FROM ins AS s CROSS JOIN (VALUES ('minute')) AS g(grain)
    GROUP BY 1, 2, 3, 4) AS r CROSS JOIN (VALUES ('minute'), ('hour'), ('day')) AS g(grain)
    GROUP BY 1, 2, 3, 4) AS x
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (grain, bucket, event_type, result) DO UPDATE SET
      calls = observability_series.calls + EXCLUDED.calls, denied = observability_series.denied + EXCLUDED.denied,
      errors = observability_series.errors + EXCLUDED.errors,
      tokens_in = observability_series.tokens_in + EXCLUDED.tokens_in,
      tokens_out = observability_series.tokens_out + EXCLUDED.tokens_out
    RETURNING 1)
    SELECT count(*) INTO folded FROM ins;
  UPDATE observability_fold_state SET next_xid = cut, folded_at = now(), events_folded = events_folded + folded,
    pending_xids = ARRAY(SELECT x FROM unnest(waiting) AS x WHERE x = ANY (running)
      UNION ALL SELECT x FROM unnest(running) AS x WHERE x >= lo AND x < cut ORDER BY 1);
END
$fold$;
