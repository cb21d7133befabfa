-- ingest_events: generated from shared/domain/events.ts (ingestFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION ingest_events(p_fingerprint text, p_source_ip text,
  p_received_at timestamptz, p_latest timestamptz, p_signature_hash text, p_replay_until timestamptz, p_events json,
  OUT device uuid, OUT signature_ok boolean, OUT inserted integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $ingest$
BEGIN
  WITH d AS (SELECT id, serial_number FROM devices WHERE certificate_fingerprint = p_fingerprint),
      sig AS (INSERT INTO device_signatures (signature_hash, fingerprint, expires_at)
      SELECT p_signature_hash, p_fingerprint, p_replay_until WHERE EXISTS (SELECT 1 FROM d)
      ON CONFLICT DO NOTHING RETURNING 1),
      ins AS (
        INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, received_at, event_time,
          agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
          session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata,
          ingest_xid)
        SELECT e.event_id, d.id, d.serial_number, p_source_ip, p_received_at, e.event_time, e.agent_type,
          e.mcp_name, e.tool, e.event_type, e.result, e.deny_code, e.deny_reason, e.error_message, e.rule_applied,
          e.model, e.session_id, e.group_name, e.actor_email, e.tokens_in, e.tokens_out, e.duration_ms,
          coalesce(e.skills, '[]'::jsonb), e.prompt, e.prompt_truncated, coalesce(e.metadata, '{}'::jsonb),
          pg_current_xact_id()
        FROM json_to_recordset(p_events) AS e(event_id uuid, event_time timestamptz, agent_type text,
          mcp_name text, tool text, event_type text, result text, deny_code text, deny_reason text, error_message text,
          rule_applied text, model text, session_id text, group_name text, actor_email text, tokens_in int,
          tokens_out int, duration_ms int, skills jsonb, prompt text, prompt_truncated boolean, metadata jsonb)
          CROSS JOIN d
        WHERE EXISTS (SELECT 1 FROM sig)
        ON CONFLICT (device_id, event_id, event_time) DO NOTHING
        RETURNING 1),
      dev AS (
        UPDATE devices SET last_seen_at = p_received_at,
          last_event_at = greatest(coalesce(last_event_at, p_latest), p_latest), stats_dirty = true
        WHERE id = (SELECT id FROM d) AND EXISTS (SELECT 1 FROM sig) RETURNING 1)
      SELECT (SELECT id FROM d), EXISTS (SELECT 1 FROM sig), (SELECT count(*) FROM ins)::int
    INTO device, signature_ok, inserted;
END
$ingest$;
--> statement-breakpoint
-- fleet_stats_fold: generated from shared/domain/fleet-stats.ts (fleetFoldFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION fleet_stats_fold(max_rows integer, wait boolean, OUT folded integer, OUT more boolean)
LANGUAGE plpgsql
SET work_mem = '64MB'
AS $fold$
DECLARE
  agents integer;
  mcps integer;
  devs integer;
  emptied timestamptz[];
BEGIN
  folded := 0;
  more := false;
  IF NOT EXISTS (SELECT 1 FROM inventory_agents WHERE stats_dirty)
    AND NOT EXISTS (SELECT 1 FROM inventory_mcps WHERE stats_dirty)
    AND NOT EXISTS (SELECT 1 FROM devices WHERE stats_dirty) THEN
    RETURN;
  END IF;
  IF wait THEN
    PERFORM 1 FROM fleet_stats_state FOR UPDATE;
  ELSE
    PERFORM 1 FROM fleet_stats_state FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      more := true;
      RETURN;
    END IF;
  END IF;
  WITH picked AS MATERIALIZED (SELECT id, agent_type, removed_at, stats_present, first_seen_at, last_seen_at
        FROM inventory_agents WHERE stats_dirty LIMIT max_rows FOR UPDATE SKIP LOCKED),
      counted AS (INSERT INTO fleet_agent_stats AS s (agent_type, devices, first_seen_at, last_seen_at)
        SELECT agent_type, sum((removed_at IS NULL)::int - stats_present::int)::int, min(first_seen_at),
          max(last_seen_at)
        FROM picked GROUP BY agent_type ORDER BY agent_type
        ON CONFLICT (agent_type) DO UPDATE SET devices = s.devices + EXCLUDED.devices,
          first_seen_at = LEAST(s.first_seen_at, EXCLUDED.first_seen_at),
          last_seen_at = GREATEST(s.last_seen_at, EXCLUDED.last_seen_at)
        RETURNING 1),
      done AS (UPDATE inventory_agents a SET stats_present = p.removed_at IS NULL, stats_dirty = false
        FROM picked p WHERE a.id = p.id RETURNING 1)
    SELECT count(*) INTO agents FROM done;
  WITH picked AS MATERIALIZED (SELECT id, device_id, agent_type, name, enabled, transport, removed_at,
          first_seen_at, last_seen_at
        FROM inventory_mcps WHERE stats_dirty LIMIT max_rows FOR UPDATE SKIP LOCKED),
      states AS MATERIALIZED (SELECT m.device_id, m.agent_type, m.name,
        m.stats_present AS was_present, m.stats_enabled AS was_enabled, m.stats_transport AS was_transport,
        CASE WHEN p.id IS NULL THEN m.stats_present ELSE p.removed_at IS NULL END AS is_present,
        coalesce(p.enabled, m.stats_enabled) AS is_enabled, coalesce(p.transport, m.stats_transport) AS is_transport,
        p.first_seen_at, p.last_seen_at, NULL::timestamptz AS no_time
      FROM inventory_mcps m LEFT JOIN picked p ON p.id = m.id
      WHERE m.device_id IN (SELECT device_id FROM picked) AND (m.stats_present OR p.id IS NOT NULL)),
      counted AS (INSERT INTO fleet_mcp_stats AS s (name, agent_type, transport, devices, enabled_devices, disabled_devices, installs, enabled_installs, first_seen_at, last_seen_at)
    SELECT name, agent_type, transport, sum(devices)::int, sum(enabled_devices)::int, sum(disabled_devices)::int, sum(installs)::int, sum(enabled_installs)::int, min(first_seen_at), max(last_seen_at)
    FROM (SELECT name, agent_type, transport, 1 * devices AS devices, 1 * enabled_devices AS enabled_devices, 1 * disabled_devices AS disabled_devices, 1 * installs AS installs, 1 * enabled_installs AS enabled_installs,
          first_seen_at, last_seen_at FROM (SELECT r.device_id, k.name, k.agent_type, k.transport, bool_or(r.is_present)::int AS devices,
      bool_or(r.is_present AND r.is_enabled)::int AS enabled_devices,
      bool_or(r.is_present AND NOT r.is_enabled)::int AS disabled_devices,
      (count(*) FILTER (WHERE r.is_present))::int AS installs,
      (count(*) FILTER (WHERE r.is_present AND r.is_enabled))::int AS enabled_installs,
      min(r.first_seen_at) AS first_seen_at, max(r.last_seen_at) AS last_seen_at
    FROM states r CROSS JOIN LATERAL (VALUES (r.name, r.agent_type, r.is_transport), (r.name, '', r.is_transport),
      (r.name, r.agent_type, ''), (r.name, '', ''), ('', r.agent_type, r.is_transport), ('', '', r.is_transport),
      ('', r.agent_type, ''), ('', '', '')) AS k(name, agent_type, transport) GROUP BY 1, 2, 3, 4) c UNION ALL SELECT name, agent_type, transport, -1 * devices AS devices, -1 * enabled_devices AS enabled_devices, -1 * disabled_devices AS disabled_devices, -1 * installs AS installs, -1 * enabled_installs AS enabled_installs,
          first_seen_at, last_seen_at FROM (SELECT r.device_id, k.name, k.agent_type, k.transport, bool_or(r.was_present)::int AS devices,
      bool_or(r.was_present AND r.was_enabled)::int AS enabled_devices,
      bool_or(r.was_present AND NOT r.was_enabled)::int AS disabled_devices,
      (count(*) FILTER (WHERE r.was_present))::int AS installs,
      (count(*) FILTER (WHERE r.was_present AND r.was_enabled))::int AS enabled_installs,
      min(r.no_time) AS first_seen_at, max(r.no_time) AS last_seen_at
    FROM states r CROSS JOIN LATERAL (VALUES (r.name, r.agent_type, r.was_transport), (r.name, '', r.was_transport),
      (r.name, r.agent_type, ''), (r.name, '', ''), ('', r.agent_type, r.was_transport), ('', '', r.was_transport),
      ('', r.agent_type, ''), ('', '', '')) AS k(name, agent_type, transport) GROUP BY 1, 2, 3, 4) c) x
    GROUP BY 1, 2, 3
    HAVING max(last_seen_at) IS NOT NULL OR sum(devices) <> 0 OR sum(enabled_devices) <> 0 OR sum(disabled_devices) <> 0 OR sum(installs) <> 0 OR sum(enabled_installs) <> 0
    ORDER BY 1, 2, 3
    ON CONFLICT (name, agent_type, transport) DO UPDATE SET devices = s.devices + EXCLUDED.devices, enabled_devices = s.enabled_devices + EXCLUDED.enabled_devices, disabled_devices = s.disabled_devices + EXCLUDED.disabled_devices, installs = s.installs + EXCLUDED.installs, enabled_installs = s.enabled_installs + EXCLUDED.enabled_installs,
      first_seen_at = LEAST(s.first_seen_at, EXCLUDED.first_seen_at),
      last_seen_at = GREATEST(s.last_seen_at, EXCLUDED.last_seen_at) RETURNING 1),
      done AS (UPDATE inventory_mcps m SET stats_present = p.removed_at IS NULL, stats_enabled = p.enabled,
          stats_transport = p.transport, stats_dirty = false
        FROM picked p WHERE m.id = p.id RETURNING 1)
    SELECT count(*) INTO mcps FROM done;
  WITH picked AS MATERIALIZED (SELECT id, created_at, stats_counted, stats_seen_at, CASE WHEN (d.last_inventory_at IS NOT NULL OR d.last_event_at IS NOT NULL) THEN coalesce(d.last_seen_at, '-infinity'::timestamptz) END AS seen_at
    FROM devices d WHERE stats_dirty LIMIT max_rows FOR UPDATE SKIP LOCKED),
      minutes AS (INSERT INTO fleet_device_minutes AS s (kind, minute, devices)
    SELECT kind, (date_trunc('minute', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), sum(n)::int FROM (SELECT 'seen' AS kind, seen_at AS at, 1 AS n FROM picked
      WHERE seen_at IS NOT NULL
    UNION ALL SELECT 'seen', stats_seen_at, -1 FROM picked WHERE stats_seen_at IS NOT NULL
    UNION ALL SELECT 'created', created_at, 1 FROM picked WHERE NOT stats_counted) x
    GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2
    ON CONFLICT (kind, minute) DO UPDATE SET devices = s.devices + EXCLUDED.devices RETURNING 1),
      totals AS (UPDATE fleet_device_stats SET devices = devices + (SELECT count(*) FROM picked WHERE NOT stats_counted),
          never_reported = never_reported + (SELECT count(*) FILTER (WHERE seen_at IS NULL)
            - count(*) FILTER (WHERE stats_counted AND stats_seen_at IS NULL) FROM picked)
        RETURNING 1),
      done AS (UPDATE devices d SET stats_counted = true, stats_seen_at = p.seen_at, stats_dirty = false
        FROM picked p WHERE d.id = p.id RETURNING p.stats_seen_at AS was_seen_at)
    SELECT count(*), array_agg(DISTINCT (date_trunc('minute', was_seen_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) FILTER (WHERE was_seen_at IS NOT NULL)
      INTO devs, emptied FROM done;
  -- The minutes devices left, once none is counted in them (a fleet's history would otherwise keep one per minute).
  DELETE FROM fleet_device_minutes WHERE kind = 'seen' AND minute = ANY (emptied) AND devices = 0;
  folded := agents + mcps + devs;
  more := agents >= max_rows OR mcps >= max_rows OR devs >= max_rows;
  UPDATE fleet_stats_state SET folded_at = now(), rows_folded = rows_folded + folded;
END
$fold$;
--> statement-breakpoint
-- fleet_stats_rebuild: generated from shared/domain/fleet-stats.ts (fleetRebuildFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION fleet_stats_rebuild()
RETURNS void
LANGUAGE plpgsql
SET work_mem = '256MB'
AS $rebuild$
BEGIN
  PERFORM 1 FROM fleet_stats_state FOR UPDATE;
  UPDATE inventory_agents SET stats_present = removed_at IS NULL, stats_dirty = false
    WHERE stats_dirty OR stats_present <> (removed_at IS NULL);
  UPDATE inventory_mcps SET stats_present = removed_at IS NULL, stats_enabled = enabled, stats_transport = transport,
      stats_dirty = false
    WHERE stats_dirty
      OR (stats_present, stats_enabled, stats_transport) IS DISTINCT FROM (removed_at IS NULL, enabled, transport);
  UPDATE devices d SET stats_counted = true, stats_seen_at = CASE WHEN (d.last_inventory_at IS NOT NULL OR d.last_event_at IS NOT NULL) THEN coalesce(d.last_seen_at, '-infinity'::timestamptz) END, stats_dirty = false
    WHERE stats_dirty OR NOT stats_counted OR stats_seen_at IS DISTINCT FROM CASE WHEN (d.last_inventory_at IS NOT NULL OR d.last_event_at IS NOT NULL) THEN coalesce(d.last_seen_at, '-infinity'::timestamptz) END;
  DELETE FROM fleet_agent_stats;
  DELETE FROM fleet_mcp_stats;
  DELETE FROM fleet_device_minutes;
  INSERT INTO fleet_device_minutes AS s (kind, minute, devices)
    SELECT kind, (date_trunc('minute', at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), sum(n)::int FROM (SELECT 'seen' AS kind, stats_seen_at AS at, 1 AS n FROM devices WHERE stats_seen_at IS NOT NULL
    UNION ALL SELECT 'created', created_at, 1 FROM devices) x
    GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2
    ON CONFLICT (kind, minute) DO UPDATE SET devices = s.devices + EXCLUDED.devices;
  UPDATE fleet_device_stats SET devices = (SELECT count(*) FROM devices),
    never_reported = (SELECT count(*) FROM devices WHERE stats_seen_at IS NULL);
  INSERT INTO fleet_agent_stats (agent_type, devices, first_seen_at, last_seen_at)
    SELECT agent_type, (count(*) FILTER (WHERE stats_present))::int, min(first_seen_at), max(last_seen_at)
    FROM inventory_agents GROUP BY agent_type ORDER BY agent_type;
  INSERT INTO fleet_mcp_stats AS s (name, agent_type, transport, devices, enabled_devices, disabled_devices, installs, enabled_installs, first_seen_at, last_seen_at)
    SELECT name, agent_type, transport, sum(devices)::int, sum(enabled_devices)::int, sum(disabled_devices)::int, sum(installs)::int, sum(enabled_installs)::int, min(first_seen_at), max(last_seen_at)
    FROM (SELECT name, agent_type, transport, 1 * devices AS devices, 1 * enabled_devices AS enabled_devices, 1 * disabled_devices AS disabled_devices, 1 * installs AS installs, 1 * enabled_installs AS enabled_installs,
          first_seen_at, last_seen_at FROM (SELECT r.device_id, k.name, k.agent_type, k.transport, bool_or(r.stats_present)::int AS devices,
      bool_or(r.stats_present AND r.stats_enabled)::int AS enabled_devices,
      bool_or(r.stats_present AND NOT r.stats_enabled)::int AS disabled_devices,
      (count(*) FILTER (WHERE r.stats_present))::int AS installs,
      (count(*) FILTER (WHERE r.stats_present AND r.stats_enabled))::int AS enabled_installs,
      min(r.first_seen_at) AS first_seen_at, max(r.last_seen_at) AS last_seen_at
    FROM inventory_mcps r CROSS JOIN LATERAL (VALUES (r.name, r.agent_type, r.stats_transport), (r.name, '', r.stats_transport),
      (r.name, r.agent_type, ''), (r.name, '', ''), ('', r.agent_type, r.stats_transport), ('', '', r.stats_transport),
      ('', r.agent_type, ''), ('', '', '')) AS k(name, agent_type, transport) GROUP BY 1, 2, 3, 4) c) x
    GROUP BY 1, 2, 3
    HAVING max(last_seen_at) IS NOT NULL OR sum(devices) <> 0 OR sum(enabled_devices) <> 0 OR sum(disabled_devices) <> 0 OR sum(installs) <> 0 OR sum(enabled_installs) <> 0
    ORDER BY 1, 2, 3
    ON CONFLICT (name, agent_type, transport) DO UPDATE SET devices = s.devices + EXCLUDED.devices, enabled_devices = s.enabled_devices + EXCLUDED.enabled_devices, disabled_devices = s.disabled_devices + EXCLUDED.disabled_devices, installs = s.installs + EXCLUDED.installs, enabled_installs = s.enabled_installs + EXCLUDED.enabled_installs,
      first_seen_at = LEAST(s.first_seen_at, EXCLUDED.first_seen_at),
      last_seen_at = GREATEST(s.last_seen_at, EXCLUDED.last_seen_at);
  UPDATE fleet_stats_state SET folded_at = now();
END
$rebuild$;

--> statement-breakpoint
-- Counts every device once (all start dirty, migration 0018); inventory rows not counted yet are folded with them.
SELECT fleet_stats_fold(2147483647, true);
