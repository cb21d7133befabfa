-- obs_sum: generated from shared/core/db/int8-sum.ts (sumAggregateSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE AGGREGATE obs_sum(bigint) (
  SFUNC = int8pl,
  STYPE = bigint,
  COMBINEFUNC = int8pl,
  PARALLEL = SAFE
);
--> statement-breakpoint
-- observability_summary: generated from shared/observability/summary/summary.ts (summaryFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION observability_summary(p_grain text, p_from timestamptz, p_to timestamptz,
  p_actor_from timestamptz, p_actor_to timestamptz, p_top integer, p_bounds timestamptz[])
RETURNS json
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET plan_cache_mode = force_generic_plan
AS $summary$
BEGIN
  IF p_grain = 'minute' THEN
    RETURN (WITH ue AS MATERIALIZED (SELECT * FROM (SELECT * FROM observability_read_tail() t WHERE t.event_time >= p_actor_from AND t.event_time < p_actor_to) e
    WHERE TRUE), tl AS MATERIALIZED (SELECT s.agent_type, s.mcp_name, s.tool, s.event_type, s.result, coalesce(s.deny_code, '') AS deny_code,
      coalesce(s.rule_applied, '') AS rule_applied, coalesce(s.model, '') AS model, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8),
        tk AS MATERIALIZED (SELECT s.mcp_name, s.tool, obs_sketch_key(s.duration_ms) AS b,
            count(*)::bigint AS n
          FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s GROUP BY 1, 2, 3),
        k AS MATERIALIZED (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max
          FROM (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups WHERE kind = 'call'
    AND ((grain = 'week' AND bucket >= p_bounds[1] AND bucket < p_bounds[2]) OR (grain = 'week' AND bucket >= p_bounds[3] AND bucket < p_bounds[4]) OR (grain = 'day' AND bucket >= p_bounds[5] AND bucket < p_bounds[6]) OR (grain = 'day' AND bucket >= p_bounds[7] AND bucket < p_bounds[8]) OR (grain = '6h' AND bucket >= p_bounds[9] AND bucket < p_bounds[10]) OR (grain = '6h' AND bucket >= p_bounds[11] AND bucket < p_bounds[12]) OR (grain = 'hour' AND bucket >= p_bounds[13] AND bucket < p_bounds[14]) OR (grain = 'hour' AND bucket >= p_bounds[15] AND bucket < p_bounds[16]))
    AND TRUE
            UNION ALL SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM tl) u
          GROUP BY agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model),
        tt AS MATERIALIZED (SELECT mcp_name, tool,
      row_number() OVER (ORDER BY calls DESC, mcp_name, tool)::integer AS rn
    FROM (SELECT * FROM (SELECT mcp_name, tool, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k GROUP BY mcp_name, tool
          OFFSET 0) g
        WHERE mcp_name <> '' AND tool <> '' ORDER BY calls DESC, mcp_name, tool LIMIT p_top) t), th AS MATERIALIZED (SELECT tt.mcp_name, tt.tool, m.sketches
    FROM (SELECT r.rn, json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches
      FROM (SELECT tt.rn, x.duration_sketch FROM observability_rollups x JOIN tt USING (mcp_name, tool)
            WHERE kind = 'tool'
    AND ((grain = 'week' AND bucket >= p_bounds[1] AND bucket < p_bounds[2]) OR (grain = 'week' AND bucket >= p_bounds[3] AND bucket < p_bounds[4]) OR (grain = 'day' AND bucket >= p_bounds[5] AND bucket < p_bounds[6]) OR (grain = 'day' AND bucket >= p_bounds[7] AND bucket < p_bounds[8]) OR (grain = '6h' AND bucket >= p_bounds[9] AND bucket < p_bounds[10]) OR (grain = '6h' AND bucket >= p_bounds[11] AND bucket < p_bounds[12]) OR (grain = 'hour' AND bucket >= p_bounds[13] AND bucket < p_bounds[14]) OR (grain = 'hour' AND bucket >= p_bounds[15] AND bucket < p_bounds[16]))
    AND TRUE
          UNION ALL SELECT tt.rn, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
      FROM tk x JOIN tt USING (mcp_name, tool) GROUP BY tt.rn) AS r GROUP BY r.rn) m JOIN tt USING (rn)),
        ts AS (SELECT json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches FROM (SELECT duration_sketch FROM observability_series_totals WHERE ((grain = 'day' AND bucket >= p_bounds[17] AND bucket < p_bounds[18]) OR (grain = 'day' AND bucket >= p_bounds[19] AND bucket < p_bounds[20]) OR (grain = 'hour' AND bucket >= p_bounds[21] AND bucket < p_bounds[22]) OR (grain = 'hour' AND bucket >= p_bounds[23] AND bucket < p_bounds[24]))
            UNION ALL SELECT CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
      FROM (SELECT b, sum(n) AS n FROM tk GROUP BY b) x) AS r), st AS MATERIALIZED (SELECT x.grain, x.bucket, x.event_type, x.result, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, max(x.dm)::int AS duration_max, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.event_type, s.result,
        obs_sketch_key(s.duration_ms) AS b, count(*) AS n, sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt,
        max(s.duration_ms) AS dm
      FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s CROSS JOIN (VALUES ('minute')) AS g(grain)
      GROUP BY 1, 2, 3, 4, 5) AS x
    GROUP BY x.grain, x.bucket, x.event_type, x.result),
      a AS (SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'week' AND bucket >= p_bounds[25] AND bucket < p_bounds[26]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'week' AND bucket >= p_bounds[27] AND bucket < p_bounds[28]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'day' AND bucket >= p_bounds[29] AND bucket < p_bounds[30]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'day' AND bucket >= p_bounds[31] AND bucket < p_bounds[32]) AND TRUE
        UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max
          FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM ue AS s CROSS JOIN (VALUES ('day')) AS g(grain)
    GROUP BY 1, 2, 3, 4) t),
      tot AS (SELECT * FROM (SELECT obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k) m, ts),
      gs AS MATERIALIZED (SELECT GROUPING(result, event_type, mcp_name, agent_type, model, deny_code, rule_applied) AS gid, result, event_type, mcp_name, agent_type, model, deny_code, rule_applied,
          obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max
        FROM k GROUP BY GROUPING SETS ((result), (event_type), (mcp_name), (agent_type), (model), (result, deny_code, rule_applied), (result, rule_applied)))
      , sr AS (SELECT bucket AS b, calls, denied, errors, tokens_in, tokens_out, NULL::int AS dmax, NULL::integer[] AS sketch,
            to_json(duration_percentiles) AS pct
          FROM observability_series_totals WHERE grain = 'minute' AND bucket >= p_from AND bucket < p_to
            AND bucket <> ALL (ARRAY(SELECT bucket FROM st))
        UNION ALL SELECT z.bucket AS b, z.calls, z.denied, z.errors, z.tokens_in, z.tokens_out, z.duration_max AS dmax,
        z.duration_sketch AS sketch, NULL::json AS pct
      FROM (SELECT z.bucket, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT r.bucket AS bucket, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, max(r.duration_max) AS duration_max
      FROM (SELECT bucket, calls, denied, errors, tokens_in, tokens_out, duration_max, duration_sketch FROM observability_series_totals
              WHERE grain = 'minute' AND bucket = ANY (ARRAY(SELECT bucket FROM st))
            UNION ALL SELECT bucket, calls, denied, errors, tokens_in, tokens_out, duration_max, duration_sketch FROM st) AS r LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2) AS z
    GROUP BY z.bucket) z)
    SELECT json_build_object(
      'totals', (SELECT json_build_object('calls', tot.calls, 'denied', tot.denied, 'errors', tot.errors, 'tokens_in', tot.tokens_in,
  'tokens_out', tot.tokens_out, 'duration_sum', tot.duration_sum, 'duration_max', tot.duration_max,
          'sketches', tot.sketches) FROM tot),
      'by_result', (SELECT json_object_agg(result, calls) FROM gs WHERE gid = 63),
      'by_event_type', (SELECT json_object_agg(event_type, calls) FROM gs WHERE gid = 95)
      , 'tools', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('mcp_name', t.mcp_name, 'tool', t.tool, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.mcp_name, t.tool) AS rn
      FROM (SELECT * FROM (SELECT mcp_name, tool, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k GROUP BY mcp_name, tool
          OFFSET 0) g
        WHERE mcp_name <> '' AND tool <> '' ORDER BY calls DESC, mcp_name, tool LIMIT p_top) t) AS r) AS b),
      'tool_sketches', (SELECT json_agg(json_build_array(th.mcp_name, th.tool, th.sketches)) FROM th),
      'mcps', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('mcp_name', t.mcp_name, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.mcp_name) AS rn
      FROM (SELECT * FROM (SELECT mcp_name, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 111) AS q GROUP BY mcp_name
          OFFSET 0) g
        WHERE mcp_name <> '' ORDER BY calls DESC, mcp_name LIMIT p_top) t) AS r) AS b),
      'agents', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('agent_type', t.agent_type, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.agent_type) AS rn
      FROM (SELECT * FROM (SELECT agent_type, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 119) AS q GROUP BY agent_type
          OFFSET 0) g
        WHERE agent_type <> '' ORDER BY calls DESC, agent_type LIMIT p_top) t) AS r) AS b),
      'models', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('model', t.model, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.model) AS rn
      FROM (SELECT * FROM (SELECT model, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 123) AS q GROUP BY model
          OFFSET 0) g
        WHERE model <> '' ORDER BY calls DESC, model LIMIT p_top) t) AS r) AS b),
      'deny_codes', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('deny_code', t.deny_code, 'rule_applied', t.rule_applied, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.deny_code, t.rule_applied) AS rn
      FROM (SELECT * FROM (SELECT deny_code, rule_applied, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 60) AS q WHERE result = 'denied' GROUP BY deny_code, rule_applied
          OFFSET 0) g
        WHERE deny_code <> '' AND rule_applied <> '' ORDER BY calls DESC, deny_code, rule_applied LIMIT p_top) t) AS r) AS b),
      'rules', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('rule_applied', t.rule_applied, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.rule_applied) AS rn
      FROM (SELECT * FROM (SELECT rule_applied, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 62) AS q WHERE result = 'denied' GROUP BY rule_applied
          OFFSET 0) g
        WHERE rule_applied <> '' ORDER BY calls DESC, rule_applied LIMIT p_top) t) AS r) AS b),
      'actors', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('actor_email', t.actor_email, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.actor_email) AS rn
      FROM (SELECT * FROM (SELECT actor_email, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM a GROUP BY actor_email
          OFFSET 0) g
        WHERE actor_email <> '' ORDER BY calls DESC, actor_email LIMIT p_top) t) AS r) AS b),
      'series', (SELECT json_agg(json_build_array(extract(epoch FROM s.b)::bigint, s.calls, s.denied, s.errors,
          s.tokens_in, s.tokens_out, s.dmax, s.sketch, s.pct) ORDER BY s.b) FROM sr s)) AS j);
  END IF;
  RETURN (WITH ue AS MATERIALIZED (SELECT * FROM (SELECT * FROM observability_read_tail() t WHERE t.event_time >= p_actor_from AND t.event_time < p_actor_to) e
    WHERE TRUE), tl AS MATERIALIZED (SELECT s.agent_type, s.mcp_name, s.tool, s.event_type, s.result, coalesce(s.deny_code, '') AS deny_code,
      coalesce(s.rule_applied, '') AS rule_applied, coalesce(s.model, '') AS model, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8),
        tk AS MATERIALIZED (SELECT s.mcp_name, s.tool, obs_sketch_key(s.duration_ms) AS b,
            count(*)::bigint AS n
          FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s GROUP BY 1, 2, 3),
        k AS MATERIALIZED (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max
          FROM (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups WHERE kind = 'call'
    AND ((grain = 'week' AND bucket >= p_bounds[1] AND bucket < p_bounds[2]) OR (grain = 'week' AND bucket >= p_bounds[3] AND bucket < p_bounds[4]) OR (grain = 'day' AND bucket >= p_bounds[5] AND bucket < p_bounds[6]) OR (grain = 'day' AND bucket >= p_bounds[7] AND bucket < p_bounds[8]) OR (grain = '6h' AND bucket >= p_bounds[9] AND bucket < p_bounds[10]) OR (grain = '6h' AND bucket >= p_bounds[11] AND bucket < p_bounds[12]) OR (grain = 'hour' AND bucket >= p_bounds[13] AND bucket < p_bounds[14]) OR (grain = 'hour' AND bucket >= p_bounds[15] AND bucket < p_bounds[16]))
    AND TRUE
            UNION ALL SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM tl) u
          GROUP BY agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model),
        tt AS MATERIALIZED (SELECT mcp_name, tool,
      row_number() OVER (ORDER BY calls DESC, mcp_name, tool)::integer AS rn
    FROM (SELECT * FROM (SELECT mcp_name, tool, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k GROUP BY mcp_name, tool
          OFFSET 0) g
        WHERE mcp_name <> '' AND tool <> '' ORDER BY calls DESC, mcp_name, tool LIMIT p_top) t), th AS MATERIALIZED (SELECT tt.mcp_name, tt.tool, m.sketches
    FROM (SELECT r.rn, json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches
      FROM (SELECT tt.rn, x.duration_sketch FROM observability_rollups x JOIN tt USING (mcp_name, tool)
            WHERE kind = 'tool'
    AND ((grain = 'week' AND bucket >= p_bounds[1] AND bucket < p_bounds[2]) OR (grain = 'week' AND bucket >= p_bounds[3] AND bucket < p_bounds[4]) OR (grain = 'day' AND bucket >= p_bounds[5] AND bucket < p_bounds[6]) OR (grain = 'day' AND bucket >= p_bounds[7] AND bucket < p_bounds[8]) OR (grain = '6h' AND bucket >= p_bounds[9] AND bucket < p_bounds[10]) OR (grain = '6h' AND bucket >= p_bounds[11] AND bucket < p_bounds[12]) OR (grain = 'hour' AND bucket >= p_bounds[13] AND bucket < p_bounds[14]) OR (grain = 'hour' AND bucket >= p_bounds[15] AND bucket < p_bounds[16]))
    AND TRUE
          UNION ALL SELECT tt.rn, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
      FROM tk x JOIN tt USING (mcp_name, tool) GROUP BY tt.rn) AS r GROUP BY r.rn) m JOIN tt USING (rn)),
        ts AS (SELECT json_agg(r.duration_sketch) FILTER (WHERE r.duration_sketch IS NOT NULL) AS sketches FROM (SELECT duration_sketch FROM observability_series_totals WHERE ((grain = 'day' AND bucket >= p_bounds[17] AND bucket < p_bounds[18]) OR (grain = 'day' AND bucket >= p_bounds[19] AND bucket < p_bounds[20]) OR (grain = 'hour' AND bucket >= p_bounds[21] AND bucket < p_bounds[22]) OR (grain = 'hour' AND bucket >= p_bounds[23] AND bucket < p_bounds[24]))
            UNION ALL SELECT CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
      FROM (SELECT b, sum(n) AS n FROM tk GROUP BY b) x) AS r), st AS MATERIALIZED (SELECT x.grain, x.bucket, x.event_type, x.result, sum(x.n)::bigint AS calls,
      (CASE WHEN x.result = 'denied' THEN sum(x.n) ELSE 0 END)::bigint AS denied,
      (CASE WHEN x.result = 'error' THEN sum(x.n) ELSE 0 END)::bigint AS errors,
      sum(x.ti)::bigint AS tokens_in, sum(x.tt)::bigint AS tokens_out, max(x.dm)::int AS duration_max, CASE WHEN count(x.b) > 0 THEN ARRAY[array_agg(x.b ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL),
    array_agg(x.n::integer ORDER BY x.b) FILTER (WHERE x.b IS NOT NULL)] END AS duration_sketch
    FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket, s.event_type, s.result,
        obs_sketch_key(s.duration_ms) AS b, count(*) AS n, sum(s.tokens_in) AS ti, sum(s.tokens_out) AS tt,
        max(s.duration_ms) AS dm
      FROM (SELECT * FROM ue WHERE event_time >= p_from AND event_time < p_to) AS s CROSS JOIN (VALUES ('hour')) AS g(grain)
      GROUP BY 1, 2, 3, 4, 5) AS x
    GROUP BY x.grain, x.bucket, x.event_type, x.result),
      a AS (SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'week' AND bucket >= p_bounds[25] AND bucket < p_bounds[26]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'week' AND bucket >= p_bounds[27] AND bucket < p_bounds[28]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'day' AND bucket >= p_bounds[29] AND bucket < p_bounds[30]) AND TRUE UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max FROM observability_rollups
            WHERE kind = 'actor' AND (grain = 'day' AND bucket >= p_bounds[31] AND bucket < p_bounds[32]) AND TRUE
        UNION ALL SELECT actor_email, calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max
          FROM (SELECT g.grain, (CASE WHEN g.grain = '6h' THEN date_trunc('day', s.event_time AT TIME ZONE 'UTC')
      + (floor(extract(hour FROM s.event_time AT TIME ZONE 'UTC') / 6))::int * interval '6 hours'
    ELSE date_trunc(g.grain, s.event_time AT TIME ZONE 'UTC') END) AT TIME ZONE 'UTC' AS bucket,
      coalesce(s.actor_email, '') AS actor_email, coalesce(s.group_name, '') AS group_name, count(*)::bigint AS calls, count(*) FILTER (WHERE s.result = 'denied') AS denied,
  count(*) FILTER (WHERE s.result = 'error') AS errors, sum(s.tokens_in)::bigint AS tokens_in,
  sum(s.tokens_out)::bigint AS tokens_out, sum(s.duration_ms)::bigint AS duration_sum,
  max(s.duration_ms)::int AS duration_max
    FROM ue AS s CROSS JOIN (VALUES ('day')) AS g(grain)
    GROUP BY 1, 2, 3, 4) t),
      tot AS (SELECT * FROM (SELECT obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k) m, ts),
      gs AS MATERIALIZED (SELECT GROUPING(result, event_type, mcp_name, agent_type, model, deny_code, rule_applied) AS gid, result, event_type, mcp_name, agent_type, model, deny_code, rule_applied,
          obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max
        FROM k GROUP BY GROUPING SETS ((result), (event_type), (mcp_name), (agent_type), (model), (result, deny_code, rule_applied), (result, rule_applied)))
      , sr AS (SELECT bucket AS b, calls, denied, errors, tokens_in, tokens_out, NULL::int AS dmax, NULL::integer[] AS sketch,
            to_json(duration_percentiles) AS pct
          FROM observability_series_totals WHERE grain = 'hour' AND bucket >= p_from AND bucket < p_to
            AND bucket <> ALL (ARRAY(SELECT bucket FROM st))
        UNION ALL SELECT z.bucket AS b, z.calls, z.denied, z.errors, z.tokens_in, z.tokens_out, z.duration_max AS dmax,
        z.duration_sketch AS sketch, NULL::json AS pct
      FROM (SELECT z.bucket, coalesce(sum(z.calls), 0)::bigint AS calls, coalesce(sum(z.denied), 0)::bigint AS denied, coalesce(sum(z.errors), 0)::bigint AS errors, coalesce(sum(z.tokens_in), 0)::bigint AS tokens_in, coalesce(sum(z.tokens_out), 0)::bigint AS tokens_out, max(z.duration_max)::integer AS duration_max, CASE WHEN count(z.k) > 0 THEN ARRAY[array_agg(z.k) FILTER (WHERE z.k IS NOT NULL),
    array_agg(z.c::integer) FILTER (WHERE z.k IS NOT NULL)] END AS duration_sketch
    FROM (SELECT r.bucket AS bucket, u.k AS k, sum(u.c)::bigint AS c, sum(r.calls) FILTER (WHERE u.o IS NULL OR u.o = 1) AS calls, sum(r.denied) FILTER (WHERE u.o IS NULL OR u.o = 1) AS denied, sum(r.errors) FILTER (WHERE u.o IS NULL OR u.o = 1) AS errors, sum(r.tokens_in) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_in, sum(r.tokens_out) FILTER (WHERE u.o IS NULL OR u.o = 1) AS tokens_out, max(r.duration_max) AS duration_max
      FROM (SELECT bucket, calls, denied, errors, tokens_in, tokens_out, duration_max, duration_sketch FROM observability_series_totals
              WHERE grain = 'hour' AND bucket = ANY (ARRAY(SELECT bucket FROM st))
            UNION ALL SELECT bucket, calls, denied, errors, tokens_in, tokens_out, duration_max, duration_sketch FROM st) AS r LEFT JOIN LATERAL (SELECT x.k, x.c, x.o
        FROM unnest(r.duration_sketch[(1):(1)], r.duration_sketch[(2):(2)]) WITH ORDINALITY AS x(k, c, o)
        OFFSET 0) AS u ON true
      
      GROUP BY 1, 2) AS z
    GROUP BY z.bucket) z)
    SELECT json_build_object(
      'totals', (SELECT json_build_object('calls', tot.calls, 'denied', tot.denied, 'errors', tot.errors, 'tokens_in', tot.tokens_in,
  'tokens_out', tot.tokens_out, 'duration_sum', tot.duration_sum, 'duration_max', tot.duration_max,
          'sketches', tot.sketches) FROM tot),
      'by_result', (SELECT json_object_agg(result, calls) FROM gs WHERE gid = 63),
      'by_event_type', (SELECT json_object_agg(event_type, calls) FROM gs WHERE gid = 95)
      , 'tools', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('mcp_name', t.mcp_name, 'tool', t.tool, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.mcp_name, t.tool) AS rn
      FROM (SELECT * FROM (SELECT mcp_name, tool, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM k GROUP BY mcp_name, tool
          OFFSET 0) g
        WHERE mcp_name <> '' AND tool <> '' ORDER BY calls DESC, mcp_name, tool LIMIT p_top) t) AS r) AS b),
      'tool_sketches', (SELECT json_agg(json_build_array(th.mcp_name, th.tool, th.sketches)) FROM th),
      'mcps', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('mcp_name', t.mcp_name, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.mcp_name) AS rn
      FROM (SELECT * FROM (SELECT mcp_name, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 111) AS q GROUP BY mcp_name
          OFFSET 0) g
        WHERE mcp_name <> '' ORDER BY calls DESC, mcp_name LIMIT p_top) t) AS r) AS b),
      'agents', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('agent_type', t.agent_type, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.agent_type) AS rn
      FROM (SELECT * FROM (SELECT agent_type, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 119) AS q GROUP BY agent_type
          OFFSET 0) g
        WHERE agent_type <> '' ORDER BY calls DESC, agent_type LIMIT p_top) t) AS r) AS b),
      'models', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('model', t.model, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.model) AS rn
      FROM (SELECT * FROM (SELECT model, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 123) AS q GROUP BY model
          OFFSET 0) g
        WHERE model <> '' ORDER BY calls DESC, model LIMIT p_top) t) AS r) AS b),
      'deny_codes', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('deny_code', t.deny_code, 'rule_applied', t.rule_applied, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.deny_code, t.rule_applied) AS rn
      FROM (SELECT * FROM (SELECT deny_code, rule_applied, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 60) AS q WHERE result = 'denied' GROUP BY deny_code, rule_applied
          OFFSET 0) g
        WHERE deny_code <> '' AND rule_applied <> '' ORDER BY calls DESC, deny_code, rule_applied LIMIT p_top) t) AS r) AS b),
      'rules', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('rule_applied', t.rule_applied, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.rule_applied) AS rn
      FROM (SELECT * FROM (SELECT rule_applied, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM (SELECT * FROM gs WHERE gid = 62) AS q WHERE result = 'denied' GROUP BY rule_applied
          OFFSET 0) g
        WHERE rule_applied <> '' ORDER BY calls DESC, rule_applied LIMIT p_top) t) AS r) AS b),
      'actors', (SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= 32768
        AS keep FROM (SELECT json_build_object('actor_email', t.actor_email, 'calls', t.calls, 'denied', t.denied, 'errors', t.errors, 'tokens_in', t.tokens_in,
  'tokens_out', t.tokens_out, 'duration_sum', t.duration_sum, 'duration_max', t.duration_max) AS o,
        row_number() OVER (ORDER BY t.calls DESC, t.actor_email) AS rn
      FROM (SELECT * FROM (SELECT actor_email, obs_sum(calls) AS calls, obs_sum(denied) AS denied, obs_sum(errors) AS errors, obs_sum(tokens_in) AS tokens_in, obs_sum(tokens_out) AS tokens_out, obs_sum(duration_sum) AS duration_sum, max(duration_max) AS duration_max FROM a GROUP BY actor_email
          OFFSET 0) g
        WHERE actor_email <> '' ORDER BY calls DESC, actor_email LIMIT p_top) t) AS r) AS b),
      'series', (SELECT json_agg(json_build_array(extract(epoch FROM s.b)::bigint, s.calls, s.denied, s.errors,
          s.tokens_in, s.tokens_out, s.dmax, s.sketch, s.pct) ORDER BY s.b) FROM sr s)) AS j);
END
$summary$;
