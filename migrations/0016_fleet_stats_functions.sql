-- fleet_stats_fold: generated from shared/domain/fleet-stats.ts (fleetFoldFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION fleet_stats_fold(max_rows integer, wait boolean, OUT folded integer, OUT more boolean)
LANGUAGE plpgsql
SET work_mem = '64MB'
AS $fold$
DECLARE
  agents integer;
  mcps integer;
BEGIN
  folded := 0;
  more := false;
  IF NOT EXISTS (SELECT 1 FROM inventory_agents WHERE stats_dirty)
    AND NOT EXISTS (SELECT 1 FROM inventory_mcps WHERE stats_dirty) THEN
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
  folded := agents + mcps;
  more := agents >= max_rows OR mcps >= max_rows;
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
  DELETE FROM fleet_agent_stats;
  DELETE FROM fleet_mcp_stats;
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
-- Counts the inventory rows stored before the counters existed (migration 0015 left them all dirty).
SELECT fleet_stats_rebuild();
