import { sql } from 'drizzle-orm';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { jsonParam, textParam, tsParam } from '../core/db/sql-values.ts';
import { signatureInsert } from './devices.ts';
import type { VerifiedDeviceRequest } from './enrollment.ts';
import { enrolledDeviceSql, replayedRequest, unknownDevice } from './enrollment.ts';
import type { InventoryBody } from './schemas.ts';

/**
 * POST /v1/devices/inventory: the report replaces the device's current inventory. Agents and MCPs keep their
 * first_seen_at; ones no longer reported get removed_at; every appearance and disappearance is written to
 * inventory_changes (the fleet change feed). An MCP row is one (agent type, name, scope, fingerprint): the same name
 * in two scopes or with two configs is two rows. The change feed stays per name: a name appears when the agent type
 * had no row of it and disappears when none is left (a changed config alone is not a change of the feed). Every row it writes is marked for the fleet counters' fold (stats_dirty,
 * shared/observability/fleet/stats.ts). One statement, one database call: it finds the device by the
 * certificate's fingerprint (401 unknown_device), then does all of it, or nothing (replay included).
 * Only name, enabled, transport, scope, source identity, fingerprint and tool hashes of an MCP reach this function (the schema
 * drops anything else: command, args, env, headers, URLs).
 */
export async function replaceInventory(db: Db, device: VerifiedDeviceRequest, body: InventoryBody) {
  const now = new Date();
  const agents = body.agents.map((a) => ({
    agent_type: a.agentType,
    display_name: a.displayName,
    version: a.version ?? null,
    capture: a.capture ?? null,
  }));
  const mcps = body.agents.flatMap((a) =>
    a.mcps.map((m) => ({
      agent_type: a.agentType,
      name: m.name,
      enabled: m.enabled,
      transport: m.transport,
      scope: m.scope ?? null,
      source_type: m.source?.type ?? null,
      source_name: m.source?.name ?? null,
      source_version: m.source?.version ?? null,
      fingerprint: m.fingerprint ?? null,
    })),
  );
  // Tool definition hashes (from the agent's MCP proxy): one row per distinct (agent type, server, tool, hash), the
  // same server in two scopes reporting the same tools once. They accumulate: a hash no longer reported keeps its row
  // and its last_seen_at, which is what tells a changed definition from the one before.
  const tools = [
    ...new Map(
      body.agents.flatMap((a) =>
        a.mcps.flatMap((m) =>
          (m.tools ?? []).map((t) => [
            JSON.stringify([a.agentType, m.name, t.name, t.hash]),
            {
              agent_type: a.agentType,
              mcp_name: m.name,
              tool_name: t.name,
              definition_hash: t.hash,
              source_type: m.source?.type ?? null,
              source_name: m.source?.name ?? null,
              source_version: m.source?.version ?? null,
            },
          ]),
        ),
      ),
    ).values(),
  ];
  // The enrolled device of the certificate, found by the statement itself (`d`): none, and nothing is written.
  const dev = sql`(SELECT id FROM d)`;
  const at = tsParam(now);
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  const agentVersion = textParam(body.agentVersion);
  const [row] = await queryRows(
    db,
    sql`WITH d AS (${enrolledDeviceSql(textParam(device.fingerprint))}),
      sig AS (${signatureInsert(device, sql`EXISTS (SELECT 1 FROM d)`)}),
      in_agents AS (SELECT * FROM jsonb_to_recordset(${jsonParam(agents)})
                    AS a(agent_type text, display_name text, version text, capture text)),
      in_mcps AS (SELECT * FROM jsonb_to_recordset(${jsonParam(mcps)})
                  AS m(agent_type text, name text, enabled boolean, transport text, scope text, source_type text,
                       source_name text, source_version text, fingerprint text)),
      cur_agents AS (SELECT agent_type FROM inventory_agents WHERE device_id = ${dev} AND removed_at IS NULL),
      cur_mcps AS (SELECT DISTINCT agent_type, name FROM inventory_mcps
                   WHERE device_id = ${dev} AND removed_at IS NULL),
      up_agents AS (
        INSERT INTO inventory_agents (device_id, agent_type, display_name, version, capture, first_seen_at,
          last_seen_at)
        SELECT ${dev}, agent_type, coalesce(display_name, ''), version, capture, ${at}, ${at} FROM in_agents
        WHERE ${guard}
        ON CONFLICT (device_id, agent_type) DO UPDATE
          SET display_name = EXCLUDED.display_name, version = EXCLUDED.version, capture = EXCLUDED.capture,
            last_seen_at = EXCLUDED.last_seen_at, removed_at = NULL, stats_dirty = true
        RETURNING 1),
      gone_agents AS (
        UPDATE inventory_agents SET removed_at = ${at}, stats_dirty = true
        WHERE device_id = ${dev} AND removed_at IS NULL AND ${guard}
          AND agent_type NOT IN (SELECT agent_type FROM in_agents)
        RETURNING agent_type),
      up_mcps AS (
        INSERT INTO inventory_mcps (device_id, agent_type, name, enabled, transport, scope, source_type, source_name,
          source_version, fingerprint, first_seen_at, last_seen_at)
        SELECT ${dev}, agent_type, name, enabled, transport, scope, source_type, source_name, source_version,
          fingerprint, ${at}, ${at} FROM in_mcps WHERE ${guard}
        ON CONFLICT (device_id, agent_type, name, (coalesce(scope, '')), (coalesce(fingerprint, ''))) DO UPDATE
          SET enabled = EXCLUDED.enabled, transport = EXCLUDED.transport, source_type = EXCLUDED.source_type,
              source_name = EXCLUDED.source_name, source_version = EXCLUDED.source_version,
              last_seen_at = EXCLUDED.last_seen_at, removed_at = NULL, stats_dirty = true
        RETURNING 1),
      gone_mcps AS (
        UPDATE inventory_mcps g SET removed_at = ${at}, stats_dirty = true
        WHERE device_id = ${dev} AND removed_at IS NULL AND ${guard}
          AND NOT EXISTS (SELECT 1 FROM in_mcps i WHERE i.agent_type = g.agent_type AND i.name = g.name
            AND coalesce(i.scope, '') = coalesce(g.scope, '') AND coalesce(i.fingerprint, '') = coalesce(g.fingerprint, ''))
        RETURNING agent_type, name),
      up_tools AS (
        INSERT INTO inventory_mcp_tools (device_id, agent_type, mcp_name, tool_name, definition_hash, source_type,
          source_name, source_version, first_seen_at, last_seen_at)
        SELECT ${dev}, agent_type, mcp_name, tool_name, definition_hash, source_type, source_name, source_version,
          ${at}, ${at}
        FROM jsonb_to_recordset(${jsonParam(tools)})
          AS t(agent_type text, mcp_name text, tool_name text, definition_hash text, source_type text,
               source_name text, source_version text)
        WHERE ${guard}
        ON CONFLICT (device_id, agent_type, mcp_name, tool_name, definition_hash) DO UPDATE
          SET source_type = EXCLUDED.source_type, source_name = EXCLUDED.source_name,
              source_version = EXCLUDED.source_version, last_seen_at = EXCLUDED.last_seen_at
        RETURNING 1),
      changes AS (
        INSERT INTO inventory_changes (device_id, kind, agent_type, mcp_name, at)
        SELECT ${dev}, 'agent_appeared', agent_type, NULL, ${at} FROM in_agents
          WHERE ${guard} AND agent_type NOT IN (SELECT agent_type FROM cur_agents)
        UNION ALL
        SELECT ${dev}, 'agent_disappeared', agent_type, NULL, ${at} FROM gone_agents
        UNION ALL
        SELECT DISTINCT ${dev}, 'mcp_appeared', agent_type, name, ${at} FROM in_mcps
          WHERE ${guard} AND (agent_type, name) NOT IN (SELECT agent_type, name FROM cur_mcps)
        UNION ALL
        SELECT DISTINCT ${dev}, 'mcp_disappeared', agent_type, name, ${at} FROM gone_mcps
          WHERE (agent_type, name) NOT IN (SELECT agent_type, name FROM in_mcps)
        RETURNING 1),
      dev AS (
        UPDATE devices SET last_seen_at = ${at}, last_inventory_at = ${at}, agent_version = ${agentVersion},
          inventory_xid = pg_current_xact_id(), stats_dirty = true
        WHERE id = ${dev} AND ${guard} RETURNING 1)
      SELECT ${dev}::text AS device_id, (SELECT count(*) FROM sig)::int AS ok,
             (SELECT count(*) FROM up_agents)::int AS agents,
             (SELECT count(*) FROM changes)::int AS changes, (SELECT count(*) FROM up_tools)::int AS tools, (SELECT count(*) FROM dev)::int AS dev`,
    { device_id: col.nullable(col.text), ok: col.number },
  );
  if (!row?.device_id) throw unknownDevice();
  if (Number(row.ok) !== 1) throw replayedRequest();
  return {
    deviceId: row.device_id,
    agentsIn: agents.length,
    mcpsIn: mcps.length,
    receivedAt: now.toISOString(),
  };
}
