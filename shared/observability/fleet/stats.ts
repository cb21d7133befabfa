// Fleet counters: the agents and MCPs views and the fleet summary read per-key counters instead of
// aggregating every inventory row, which at 100,000 devices (about a million MCP rows) took more than a second.
//
// The counters are kept by a fold, as the event rollups are (shared/observability/rollups/rollups.ts):
// - Each inventory row carries its state as the counters last counted it (stats_present, stats_enabled,
//   stats_transport) and stats_dirty. An inventory report only marks its rows dirty, so reports never wait on a
//   shared counter row, however many devices report at once.
// - The fold (fleet_stats_fold(), below) takes dirty rows it can lock (SKIP LOCKED: a report in progress keeps its
//   rows for the next fold), computes each affected device's contribution to every key before (the counted state)
//   and after (the rows' present state), adds the difference to the counters, and marks the rows counted. Folds take
//   the fleet_stats_state row in turn, so a device is never counted by two at once.
// - A device counts once per key however many of its rows match (the same MCP under two agent types is one device),
//   which is why the fold works per device and not per row.
//
// Keys: per agent type (fleet_agent_stats), and per (MCP name, agent type, transport) with '' for "any"
// (fleet_mcp_stats), so each filter of the MCPs view and each total of the summary is one counter row.
// first_seen_at / last_seen_at of a key are when any device first and last reported it (they do not move back when
// a device drops it).
//
// Device counters: the fleet summary's device counts come from fleet_device_stats (all devices, never reported) and
// fleet_device_minutes (devices per minute of their last-seen time, reported ones only, and per minute of their
// registration), kept by the same fold from the devices whose status columns changed (stats_dirty; the writers of
// last_seen_at, last_inventory_at and last_event_at set it). Online, "seen since T", is the sum of the minutes after
// T's plus the devices counted in T's own minute (an index range of one minute); new in 24 h likewise.
//
// Reads never fold: each adds to the counters, in its one statement, what folding the rows not folded yet would
// change (the read's tail, at most READ_TAIL_MAX_ROWS of each table: fleetTailCtes), so a read writes nothing and
// sees what a fold would. The scheduled observability/fold folds them. fleet_stats_rebuild() recounts everything (the
// migration that introduced the counters, bulk loads).
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../core/db/database.ts';
import { callFold, type FoldResult, repeatFold } from '../rollups/rollups.ts';

/** Names of the SQL functions (generated into migrations, scripts/function-migrations.ts). */
export const FLEET_FOLD_FUNCTION = 'fleet_stats_fold';
export const FLEET_REBUILD_FUNCTION = 'fleet_stats_rebuild';

/**
 * The most rows of each table (inventory agents, inventory MCPs, devices) not folded yet that a read adds to the
 * counters (fleetTailCtes): as many as a read folded before it answered when reads folded, so reads are as fresh
 * as then; the schedule keeps the backlog below it.
 */
export const READ_TAIL_MAX_ROWS = 2_000;
/** The most inventory rows one scheduled call folds, in one transaction. */
export const SCHEDULED_FOLD_MAX_ROWS = 50_000;

/** Whether device `d` has reported (inventory or events): before that it is never_reported, whatever it was seen. */
export const reportedSql = (d: string): SQL =>
  sql.raw(`(${d}.last_inventory_at IS NOT NULL OR ${d}.last_event_at IS NOT NULL)`);

/** The UTC minute of a timestamptz, as a timestamptz: the key of fleet_device_minutes. */
const minuteOf = (t: SQL): SQL => sql`(date_trunc('minute', ${t} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

/**
 * The last-seen time the counters keep for device `d`: NULL until it has reported, then its last_seen_at, or
 * -infinity for a reported device never seen (a row restored without it: offline).
 */
const countedSeenSql = (d: string): SQL =>
  sql`CASE WHEN ${reportedSql(d)} THEN coalesce(${sql.raw(`${d}.last_seen_at`)}, '-infinity'::timestamptz) END`;

/**
 * Per-minute differences to fleet_device_minutes, from `rows` of (kind, at, n): summed per (kind, minute of at);
 * minutes that net to nothing are not written.
 */
const addToDeviceMinutes = (rows: SQL): SQL =>
  sql`INSERT INTO fleet_device_minutes AS s (kind, minute, devices)
    SELECT kind, ${minuteOf(sql`at`)}, sum(n)::int FROM (${rows}) x
    GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, 2
    ON CONFLICT (kind, minute) DO UPDATE SET devices = s.devices + EXCLUDED.devices`;

/**
 * The fleet summary's device counts as one JSON object (total, online, offline, never_reported, new_24h): online
 * are the reported devices whose last-seen time is at or after `since`, new_24h those registered at or after
 * `dayAgo`. Each is the sum of the whole minutes after the boundary's plus the devices of the boundary's minute,
 * counted on an index, plus what counting the devices of the read's tail (fleetTailCtes) would change.
 */
export function deviceCountsSql(since: SQL, dayAgo: SQL): SQL {
  const after = (kind: string, t: SQL) =>
    sql`(SELECT coalesce(sum(devices), 0) FROM fleet_device_minutes
      WHERE kind = ${kind} AND minute > ${minuteOf(t)})`;
  const minuteEnd = (t: SQL) => sql`${minuteOf(t)} + interval '1 minute'`;
  const online = sql`${after('seen', since)} + (SELECT count(*) FROM devices
      WHERE stats_seen_at >= ${since} AND stats_seen_at < ${minuteEnd(since)})`;
  const created = sql`${after('created', dayAgo)} + (SELECT count(*) FROM devices
      WHERE created_at >= ${dayAgo} AND created_at < ${minuteEnd(dayAgo)} AND stats_counted)`;
  // As the fold counts a device: from its counted state (stats_counted, stats_seen_at) to its state now (seen_at).
  const tail = sql`SELECT count(*) FILTER (WHERE NOT stats_counted) AS devices,
      count(*) FILTER (WHERE seen_at IS NULL) - count(*) FILTER (WHERE stats_counted AND stats_seen_at IS NULL)
        AS never_reported,
      count(*) FILTER (WHERE seen_at >= ${since}) - count(*) FILTER (WHERE stats_seen_at >= ${since}) AS online,
      count(*) FILTER (WHERE NOT stats_counted AND created_at >= ${dayAgo}) AS created
    FROM ${sql.raw(TAIL.devices)}`;
  return sql`(SELECT json_build_object('total', c.devices::int, 'online', c.online::int,
      'offline', (c.devices - c.never_reported - c.online)::int, 'never_reported', c.never_reported::int,
      'new_24h', c.created::int)
    FROM (SELECT s.devices + t.devices AS devices, s.never_reported + t.never_reported AS never_reported,
        ${online} + t.online AS online, ${created} + t.created AS created
      FROM fleet_device_stats s CROSS JOIN (${tail}) t) c)`;
}

/** The eight keys an MCP row counts under: each of name, agent type and transport, or '' (any). */
const mcpKeys = (
  name: SQL,
  agentType: SQL,
  transport: SQL,
): SQL => sql`CROSS JOIN LATERAL (VALUES (${name}, ${agentType}, ${transport}), (${name}, '', ${transport}),
      (${name}, ${agentType}, ''), (${name}, '', ''), ('', ${agentType}, ${transport}), ('', '', ${transport}),
      ('', ${agentType}, ''), ('', '', '')) AS k(name, agent_type, transport)`;

interface RowState {
  present: string;
  enabled: string;
  transport: string;
  /** Columns with the row's first / last report, or NULL where the row adds no time. */
  firstSeen: string;
  lastSeen: string;
}

/**
 * Each device's contribution to each key, from `rows` (device_id, agent_type, name and the columns of `state`):
 * over the rows where `present` holds, the device (1), whether one matching row is enabled / disabled, and the
 * matching rows (installs, enabled ones); over all of them, the first and last report.
 */
function contributionsSql(rows: SQL, state: RowState): SQL {
  const col = (c: string) => sql.raw(`r.${c}`);
  const present = col(state.present);
  const enabled = col(state.enabled);
  return sql`SELECT r.device_id, k.name, k.agent_type, k.transport, bool_or(${present})::int AS devices,
      bool_or(${present} AND ${enabled})::int AS enabled_devices,
      bool_or(${present} AND NOT ${enabled})::int AS disabled_devices,
      (count(*) FILTER (WHERE ${present}))::int AS installs,
      (count(*) FILTER (WHERE ${present} AND ${enabled}))::int AS enabled_installs,
      min(${col(state.firstSeen)}) AS first_seen_at, max(${col(state.lastSeen)}) AS last_seen_at
    FROM ${rows} r ${mcpKeys(sql`r.name`, sql`r.agent_type`, col(state.transport))} GROUP BY 1, 2, 3, 4`;
}

const COUNTERS = ['devices', 'enabled_devices', 'disabled_devices', 'installs', 'enabled_installs'] as const;
const list = (f: (c: string) => string) => sql.raw(COUNTERS.map(f).join(', '));

/**
 * The differences to fleet_mcp_stats of `parts`, (sign, contributions) pairs: summed per key (first / last report:
 * the earliest and latest); a key is kept when a count changes or a time is given.
 */
const mcpDifferencesSql = (parts: Array<[1 | -1, SQL]>): SQL =>
  sql`SELECT name, agent_type, transport, ${list((c) => `sum(${c})::int`)}, min(first_seen_at), max(last_seen_at)
    FROM (${sql.join(
      parts.map(
        ([sign, c]) => sql`SELECT name, agent_type, transport, ${list((x) => `${sign} * ${x} AS ${x}`)},
          first_seen_at, last_seen_at FROM (${c}) c`,
      ),
      sql` UNION ALL `,
    )}) x
    GROUP BY 1, 2, 3
    HAVING max(last_seen_at) IS NOT NULL OR ${sql.raw(COUNTERS.map((c) => `sum(${c}) <> 0`).join(' OR '))}`;

/** Adds the differences of `parts` (mcpDifferencesSql) to fleet_mcp_stats. */
const addToMcpStats = (parts: Array<[1 | -1, SQL]>): SQL =>
  sql`INSERT INTO fleet_mcp_stats AS s (name, agent_type, transport, ${list((c) => c)}, first_seen_at, last_seen_at)
    ${mcpDifferencesSql(parts)}
    ORDER BY 1, 2, 3
    ON CONFLICT (name, agent_type, transport) DO UPDATE SET ${list((c) => `${c} = s.${c} + EXCLUDED.${c}`)},
      first_seen_at = LEAST(s.first_seen_at, EXCLUDED.first_seen_at),
      last_seen_at = GREATEST(s.last_seen_at, EXCLUDED.last_seen_at)`;

/**
 * The MCP rows of the devices in `picked` (rows taken for a fold) with their counted state (was_*) and their state
 * once `picked` is counted (is_*): the picked rows' values, the other rows' counted state (only folds change it, and
 * folds take turns).
 */
const mcpStatesSql = (picked: string): SQL => {
  const p = sql.raw(picked);
  return sql`(SELECT m.device_id, m.agent_type, m.name,
        m.stats_present AS was_present, m.stats_enabled AS was_enabled, m.stats_transport AS was_transport,
        CASE WHEN p.id IS NULL THEN m.stats_present ELSE p.removed_at IS NULL END AS is_present,
        coalesce(p.enabled, m.stats_enabled) AS is_enabled, coalesce(p.transport, m.stats_transport) AS is_transport,
        p.first_seen_at, p.last_seen_at, NULL::timestamptz AS no_time
      FROM inventory_mcps m LEFT JOIN ${p} p ON p.id = m.id
      WHERE m.device_id IN (SELECT device_id FROM ${p}) AND (m.stats_present OR p.id IS NOT NULL))`;
};

/** What counting the MCP rows `states` (mcpStatesSql) changes: the present state's contributions less the counted. */
const mcpChanges = (states: SQL): Array<[1 | -1, SQL]> => [
  [
    1,
    contributionsSql(states, {
      present: 'is_present',
      enabled: 'is_enabled',
      transport: 'is_transport',
      firstSeen: 'first_seen_at',
      lastSeen: 'last_seen_at',
    }),
  ],
  [
    -1,
    contributionsSql(states, {
      present: 'was_present',
      enabled: 'was_enabled',
      transport: 'was_transport',
      firstSeen: 'no_time',
      lastSeen: 'no_time',
    }),
  ],
];

/**
 * CREATE OR REPLACE FUNCTION fleet_stats_fold(max_rows, wait): counts up to max_rows dirty agent rows, max_rows
 * dirty MCP rows and max_rows dirty devices (those a report in progress holds are left for the next fold) and
 * returns how many (folded) and whether a full batch was taken (more). With `wait` it waits for a fold in progress;
 * without, it leaves the work to that one. When nothing is dirty (three index probes) it returns before
 * taking any lock.
 */
export function fleetFoldFunctionSql(): SQL {
  const states = mcpStatesSql('picked');
  const add = addToMcpStats(mcpChanges(sql`states`));
  // The devices: each one's counted state (stats_counted, stats_seen_at) against its state now (seen_at).
  const devicesPicked = sql`SELECT id, created_at, stats_counted, stats_seen_at, ${countedSeenSql('d')} AS seen_at
    FROM devices d WHERE stats_dirty LIMIT max_rows FOR UPDATE SKIP LOCKED`;
  const deviceMinutes = addToDeviceMinutes(sql`SELECT 'seen' AS kind, seen_at AS at, 1 AS n FROM picked
      WHERE seen_at IS NOT NULL
    UNION ALL SELECT 'seen', stats_seen_at, -1 FROM picked WHERE stats_seen_at IS NOT NULL
    UNION ALL SELECT 'created', created_at, 1 FROM picked WHERE NOT stats_counted`);
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(FLEET_FOLD_FUNCTION)}(max_rows integer, wait boolean, OUT folded integer, OUT more boolean)
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
      states AS MATERIALIZED ${states},
      counted AS (${add} RETURNING 1),
      done AS (UPDATE inventory_mcps m SET stats_present = p.removed_at IS NULL, stats_enabled = p.enabled,
          stats_transport = p.transport, stats_dirty = false
        FROM picked p WHERE m.id = p.id RETURNING 1)
    SELECT count(*) INTO mcps FROM done;
  WITH picked AS MATERIALIZED (${devicesPicked}),
      minutes AS (${deviceMinutes} RETURNING 1),
      totals AS (UPDATE fleet_device_stats SET devices = devices + (SELECT count(*) FROM picked WHERE NOT stats_counted),
          never_reported = never_reported + (SELECT count(*) FILTER (WHERE seen_at IS NULL)
            - count(*) FILTER (WHERE stats_counted AND stats_seen_at IS NULL) FROM picked)
        RETURNING 1),
      done AS (UPDATE devices d SET stats_counted = true, stats_seen_at = p.seen_at, stats_dirty = false
        FROM picked p WHERE d.id = p.id RETURNING p.stats_seen_at AS was_seen_at)
    SELECT count(*), array_agg(DISTINCT ${minuteOf(sql`was_seen_at`)}) FILTER (WHERE was_seen_at IS NOT NULL)
      INTO devs, emptied FROM done;
  -- The minutes devices left, once none is counted in them (a fleet's history would otherwise keep one per minute).
  DELETE FROM fleet_device_minutes WHERE kind = 'seen' AND minute = ANY (emptied) AND devices = 0;
  folded := agents + mcps + devs;
  more := agents >= max_rows OR mcps >= max_rows OR devs >= max_rows;
  UPDATE fleet_stats_state SET folded_at = now(), rows_folded = rows_folded + folded;
END
$fold$`;
}

/**
 * CREATE OR REPLACE FUNCTION fleet_stats_rebuild(): recounts every counter from the inventory rows and the devices, after a fold in
 * progress. For the migration that introduced the counters and for bulk loads (the benchmark's seeding); it locks
 * every inventory row it marks counted, so run it when no inventory reports arrive.
 */
export function fleetRebuildFunctionSql(): SQL {
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(FLEET_REBUILD_FUNCTION)}()
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
  UPDATE devices d SET stats_counted = true, stats_seen_at = ${countedSeenSql('d')}, stats_dirty = false
    WHERE stats_dirty OR NOT stats_counted OR stats_seen_at IS DISTINCT FROM ${countedSeenSql('d')};
  DELETE FROM fleet_agent_stats;
  DELETE FROM fleet_mcp_stats;
  DELETE FROM fleet_device_minutes;
  ${addToDeviceMinutes(sql`SELECT 'seen' AS kind, stats_seen_at AS at, 1 AS n FROM devices WHERE stats_seen_at IS NOT NULL
    UNION ALL SELECT 'created', created_at, 1 FROM devices`)};
  UPDATE fleet_device_stats SET devices = (SELECT count(*) FROM devices),
    never_reported = (SELECT count(*) FROM devices WHERE stats_seen_at IS NULL);
  INSERT INTO fleet_agent_stats (agent_type, devices, first_seen_at, last_seen_at)
    SELECT agent_type, (count(*) FILTER (WHERE stats_present))::int, min(first_seen_at), max(last_seen_at)
    FROM inventory_agents GROUP BY agent_type ORDER BY agent_type;
  ${addToMcpStats([
    [
      1,
      contributionsSql(sql`inventory_mcps`, {
        present: 'stats_present',
        enabled: 'stats_enabled',
        transport: 'stats_transport',
        firstSeen: 'first_seen_at',
        lastSeen: 'last_seen_at',
      }),
    ],
  ])};
  UPDATE fleet_stats_state SET folded_at = now();
END
$rebuild$`;
}

/** Names of the read's tail relations (fleetTailCtes). */
const TAIL = {
  agents: 'fleet_tail_agents',
  mcps: 'fleet_tail_mcps',
  mcpStates: 'fleet_tail_mcp_states',
  mcpDifferences: 'fleet_tail_mcp_differences',
  devices: 'fleet_tail_devices',
} as const;

/**
 * The read's tail: the rows not folded yet, at most READ_TAIL_MAX_ROWS of each table, and what counting them would
 * change, as the fold computes it (the same fragments), without taking a lock or writing. A reader of the counters
 * puts these first in its WITH and reads agentStatsSql / mcpStatsSql / deviceCountsSql, which add them to the stored
 * counters: one statement, whose snapshot sees the counters and the rows' counted state of the same folds, so each
 * row is counted once. Materialized, so that every reference sees the same rows; one not referenced is not run.
 */
export function fleetTailCtes(): SQL {
  const max = sql.raw(String(READ_TAIL_MAX_ROWS));
  return sql`${sql.raw(TAIL.agents)} AS MATERIALIZED (SELECT agent_type, removed_at, stats_present, first_seen_at,
        last_seen_at FROM inventory_agents WHERE stats_dirty LIMIT ${max}),
    ${sql.raw(TAIL.mcps)} AS MATERIALIZED (SELECT id, device_id, agent_type, name, enabled, transport, removed_at,
        first_seen_at, last_seen_at FROM inventory_mcps WHERE stats_dirty LIMIT ${max}),
    ${sql.raw(TAIL.mcpStates)} AS MATERIALIZED ${mcpStatesSql(TAIL.mcps)},
    ${sql.raw(TAIL.mcpDifferences)} (name, agent_type, transport, ${list((c) => c)}, first_seen_at, last_seen_at)
      AS MATERIALIZED (${mcpDifferencesSql(mcpChanges(sql.raw(TAIL.mcpStates)))}),
    ${sql.raw(TAIL.devices)} AS MATERIALIZED (SELECT created_at, stats_counted, stats_seen_at,
        ${countedSeenSql('d')} AS seen_at FROM devices d WHERE stats_dirty LIMIT ${max})`;
}

/** fleet_agent_stats with the read's tail (fleetTailCtes) added, as a relation with its columns. */
export const agentStatsSql = (): SQL =>
  sql`(SELECT agent_type, sum(devices)::int AS devices, min(first_seen_at) AS first_seen_at,
      max(last_seen_at) AS last_seen_at
    FROM (SELECT agent_type, devices, first_seen_at, last_seen_at FROM fleet_agent_stats
      UNION ALL SELECT agent_type, (removed_at IS NULL)::int - stats_present::int, first_seen_at, last_seen_at
      FROM ${sql.raw(TAIL.agents)}) x
    GROUP BY agent_type)`;

/**
 * fleet_mcp_stats with the read's tail (fleetTailCtes) added, as a relation with its columns: each stored key plus
 * its difference, and the keys only the tail has. A condition on it reaches both parts (and the stored key's index).
 */
export const mcpStatsSql = (): SQL => {
  const d = sql.raw(TAIL.mcpDifferences);
  const sameKey = sql.raw('d.name = s.name AND d.agent_type = s.agent_type AND d.transport = s.transport');
  return sql`(SELECT s.name, s.agent_type, s.transport, ${list((c) => `s.${c} + coalesce(d.${c}, 0) AS ${c}`)},
      LEAST(s.first_seen_at, d.first_seen_at) AS first_seen_at,
      GREATEST(s.last_seen_at, d.last_seen_at) AS last_seen_at
    FROM fleet_mcp_stats s LEFT JOIN ${d} d ON ${sameKey}
    UNION ALL SELECT d.name, d.agent_type, d.transport, ${list((c) => `d.${c}`)}, d.first_seen_at, d.last_seen_at
    FROM ${d} d WHERE NOT EXISTS (SELECT 1 FROM fleet_mcp_stats s WHERE ${sameKey}))`;
};

interface FleetFoldOptions {
  maxRows?: number;
  wait?: boolean;
}

/**
 * Counts the inventory rows and devices reported since the last fold (fleet_stats_fold(), above), at most `maxRows`
 * of each table; with `wait`, after a fold in progress, else none when one is in progress.
 */
export const foldFleetStats = (
  db: Db,
  { maxRows = SCHEDULED_FOLD_MAX_ROWS, wait = false }: FleetFoldOptions = {},
): Promise<FoldResult> =>
  callFold(db, sql`${sql.raw(FLEET_FOLD_FUNCTION)}(${maxRows}::integer, ${wait}::boolean)`);

/** The scheduled fold: calls of SCHEDULED_FOLD_MAX_ROWS (repeatFold) for up to `budgetMs`. */
export const foldFleetBacklog = (db: Db, budgetMs: number) =>
  repeatFold(() => foldFleetStats(db, { maxRows: SCHEDULED_FOLD_MAX_ROWS, wait: true }), budgetMs);

/** Recounts every fleet counter (fleet_stats_rebuild(), above): after a bulk load of inventory rows. */
export async function rebuildFleetStats(db: Db): Promise<void> {
  await db.execute(sql`SELECT ${sql.raw(FLEET_REBUILD_FUNCTION)}()`);
}
