-- The duration sketch (shared/domain/duration-sketch.ts) replaces the 64-bucket histogram h1..h64 of the call
-- rollups, the series and the series totals: one integer[][] column, duration_sketch (row 1 the bucket keys, row 2
-- their counts), whose percentiles are within 2 % of percentile_cont's; the totals' stored percentiles are read from
-- it (obs_sketch_percentiles) and become double precision. Generated functions first (npm run db:functions), then the
-- table changes (npm run db:generate), ordered by hand so that each function exists before a column uses it.
--
-- Existing rows are converted, not rebuilt: the rollups outlive the events (events.rollup_retention 400 days,
-- events.retention 90), so a rebuild from the events would lose the older months. Each old bucket's count moves to
-- the sketch bucket of the old bucket's geometric middle: rows folded before this migration keep about the old
-- accuracy (the old bucket's width); every event folded after it is sketched exactly. docs/observability.md says how to
-- rebuild the events' window instead (rebuildRollups).
--> statement-breakpoint
-- obs_sketch_key: generated from shared/domain/duration-sketch.ts (sketchKeyFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION obs_sketch_key(ms integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $key$
  SELECT CASE WHEN ms <= 0 THEN 0 ELSE ceil(ln(ms::double precision) / 0.0360038887560023::double precision)::integer + 1 END
$key$;
--> statement-breakpoint
-- obs_sketch_value: generated from shared/domain/duration-sketch.ts (sketchValueFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION obs_sketch_value(key integer)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $value$
  SELECT CASE WHEN key <= 0 THEN 0::double precision
    WHEN floor(u.upper) < floor(u.upper / 1.0366598778004075::double precision) + 1 THEN u.value
    ELSE least(greatest(u.value, floor(u.upper / 1.0366598778004075::double precision) + 1), floor(u.upper)) END
  FROM (SELECT power(1.0366598778004075::double precision, key - 1) AS upper,
    2 * power(1.0366598778004075::double precision, key - 1) / 2.0366598778004077::double precision AS value) AS u
$value$;
--> statement-breakpoint
-- obs_sketch_add: generated from shared/domain/duration-sketch.ts (sketchAddFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION obs_sketch_add(a integer[], b integer[])
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $add$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE (
    SELECT ARRAY[array_agg(m.k ORDER BY m.k), array_agg(m.c ORDER BY m.k)]
    FROM (SELECT u.k, sum(u.c)::integer AS c
      FROM (SELECT a[1][i] AS k, a[2][i] AS c FROM generate_subscripts(a, 2) AS i
        UNION ALL SELECT b[1][i], b[2][i] FROM generate_subscripts(b, 2) AS i) AS u
      GROUP BY u.k) AS m) END
$add$;
--> statement-breakpoint
-- obs_sketch_percentiles: generated from shared/domain/duration-sketch.ts (sketchPercentilesFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION obs_sketch_percentiles(s integer[], ps double precision[], dmax integer)
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
        low := obs_sketch_value(s[1][i]);
      END IF;
      IF seen > lo + 1 OR i = len THEN
        high := obs_sketch_value(s[1][i]);
        EXIT;
      END IF;
    END LOOP;
    result[j] := round(least(CASE WHEN h > lo THEN low + (h - lo) * (high - low) ELSE low END, dmax)::numeric, 3);
  END LOOP;
  RETURN result;
END
$percentiles$;
--> statement-breakpoint
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
  duration_sketch)
    SELECT * FROM (SELECT z.grain, z.kind, z.bucket, z.agent_type, z.mcp_name, z.tool, z.event_type, z.result, z.deny_code, z.rule_applied, z.model, z.actor_email, z.group_name, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, coalesce(sum(z.duration_sum), 0)::bigint AS duration_sum, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer ORDER BY z.k) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain AS grain, r.kind AS kind, (CASE WHEN g.grain = '6h' THEN date_trunc('day', r.bucket AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM r.bucket AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, r.bucket AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, r.agent_type AS agent_type, r.mcp_name AS mcp_name, r.tool AS tool, r.event_type AS event_type, r.result AS result, r.deny_code AS deny_code, r.rule_applied AS rule_applied, r.model AS model, r.actor_email AS actor_email, r.group_name AS group_name, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, sum(r.duration_sum) FILTER (WHERE u.o IS NULL OR u.o = 1) AS duration_sum, max(r.duration_max) AS duration_max
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
    GROUP BY 1, 2, 3, 4) AS a) AS r JOIN (VALUES ('call', 'hour'), ('call', '6h'), ('call', 'day'), ('call', 'week'), ('actor', 'day'), ('actor', 'week')) AS g(kind, grain) ON g.kind = r.kind LEFT JOIN LATERAL (SELECT x.v AS k, r.duration_sketch[2][x.o] AS c, x.o
        FROM unnest(r.duration_sketch) WITH ORDINALITY AS x(v, o)
        WHERE x.o <= array_length(r.duration_sketch, 2)) AS u ON true
      
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
    GROUP BY x.grain, x.bucket, x.event_type, x.result) AS r CROSS JOIN (VALUES ('minute'), ('hour'), ('day')) AS g(grain) LEFT JOIN LATERAL (SELECT x.v AS k, r.duration_sketch[2][x.o] AS c, x.o
        FROM unnest(r.duration_sketch) WITH ORDINALITY AS x(v, o)
        WHERE x.o <= array_length(r.duration_sketch, 2)) AS u ON true
      
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
      FROM sr AS r LEFT JOIN LATERAL (SELECT x.v AS k, r.duration_sketch[2][x.o] AS c, x.o
        FROM unnest(r.duration_sketch) WITH ORDINALITY AS x(v, o)
        WHERE x.o <= array_length(r.duration_sketch, 2)) AS u ON true
      
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
ALTER TABLE "observability_rollups" ADD COLUMN "duration_sketch" integer[];
--> statement-breakpoint
ALTER TABLE "observability_series" ADD COLUMN "duration_sketch" integer[];
--> statement-breakpoint
ALTER TABLE "observability_series_totals" ADD COLUMN "duration_sketch" integer[];
--> statement-breakpoint
UPDATE "observability_rollups" SET duration_sketch = (
  SELECT CASE WHEN count(*) > 0 THEN ARRAY[array_agg(m.k ORDER BY m.k), array_agg(m.c ORDER BY m.k)] END
  FROM (SELECT obs_sketch_key(greatest(1, round(power(1.25, u.b - 1.5)))::integer) AS k, sum(u.c)::integer AS c
    FROM unnest(ARRAY[h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64]) WITH ORDINALITY AS u(c, b) WHERE u.c > 0 GROUP BY 1) AS m) WHERE kind = 'call';
--> statement-breakpoint
UPDATE "observability_series" SET duration_sketch = (
  SELECT CASE WHEN count(*) > 0 THEN ARRAY[array_agg(m.k ORDER BY m.k), array_agg(m.c ORDER BY m.k)] END
  FROM (SELECT obs_sketch_key(greatest(1, round(power(1.25, u.b - 1.5)))::integer) AS k, sum(u.c)::integer AS c
    FROM unnest(ARRAY[h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64]) WITH ORDINALITY AS u(c, b) WHERE u.c > 0 GROUP BY 1) AS m);
--> statement-breakpoint
UPDATE "observability_series_totals" SET duration_sketch = (
  SELECT CASE WHEN count(*) > 0 THEN ARRAY[array_agg(m.k ORDER BY m.k), array_agg(m.c ORDER BY m.k)] END
  FROM (SELECT obs_sketch_key(greatest(1, round(power(1.25, u.b - 1.5)))::integer) AS k, sum(u.c)::integer AS c
    FROM unnest(ARRAY[h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29, h30, h31, h32, h33, h34, h35, h36, h37, h38, h39, h40, h41, h42, h43, h44, h45, h46, h47, h48, h49, h50, h51, h52, h53, h54, h55, h56, h57, h58, h59, h60, h61, h62, h63, h64]) WITH ORDINALITY AS u(c, b) WHERE u.c > 0 GROUP BY 1) AS m);
--> statement-breakpoint
ALTER TABLE "observability_series_totals" drop column "duration_percentiles";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h1";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h2";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h3";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h4";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h5";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h6";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h7";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h8";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h9";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h10";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h11";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h12";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h13";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h14";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h15";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h16";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h17";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h18";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h19";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h20";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h21";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h22";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h23";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h24";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h25";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h26";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h27";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h28";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h29";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h30";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h31";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h32";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h33";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h34";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h35";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h36";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h37";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h38";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h39";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h40";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h41";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h42";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h43";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h44";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h45";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h46";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h47";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h48";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h49";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h50";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h51";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h52";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h53";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h54";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h55";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h56";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h57";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h58";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h59";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h60";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h61";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h62";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h63";
--> statement-breakpoint
ALTER TABLE "observability_rollups" DROP COLUMN "h64";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h1";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h2";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h3";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h4";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h5";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h6";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h7";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h8";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h9";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h10";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h11";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h12";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h13";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h14";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h15";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h16";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h17";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h18";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h19";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h20";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h21";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h22";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h23";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h24";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h25";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h26";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h27";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h28";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h29";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h30";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h31";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h32";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h33";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h34";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h35";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h36";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h37";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h38";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h39";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h40";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h41";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h42";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h43";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h44";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h45";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h46";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h47";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h48";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h49";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h50";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h51";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h52";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h53";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h54";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h55";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h56";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h57";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h58";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h59";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h60";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h61";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h62";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h63";
--> statement-breakpoint
ALTER TABLE "observability_series" DROP COLUMN "h64";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h1";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h2";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h3";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h4";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h5";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h6";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h7";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h8";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h9";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h10";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h11";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h12";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h13";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h14";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h15";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h16";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h17";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h18";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h19";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h20";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h21";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h22";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h23";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h24";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h25";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h26";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h27";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h28";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h29";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h30";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h31";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h32";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h33";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h34";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h35";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h36";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h37";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h38";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h39";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h40";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h41";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h42";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h43";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h44";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h45";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h46";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h47";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h48";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h49";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h50";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h51";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h52";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h53";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h54";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h55";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h56";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h57";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h58";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h59";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h60";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h61";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h62";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h63";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" DROP COLUMN "h64";
--> statement-breakpoint
ALTER TABLE "observability_series_totals" ADD COLUMN "duration_percentiles" double precision[] GENERATED ALWAYS AS (obs_sketch_percentiles(duration_sketch, '{0.5,0.95,0.99}', duration_max)) STORED;
--> statement-breakpoint
DROP FUNCTION IF EXISTS obs_hist_percentiles(integer[], double precision[], integer);
--> statement-breakpoint
DROP FUNCTION IF EXISTS obs_duration_bucket(integer);
