// Fleet views for admins: devices (list, detail), agents and MCP servers across the fleet (with configured
// vs called), the fleet summary and the inventory change feed. The agents, MCPs and summary views read the fleet
// counters (stats.ts) rather than the inventory rows, which number about ten per device, with the rows not folded
// into them yet (fleetTailCtes); call counts come from the event rollups with the events not folded into them yet
// (callCountsSql). Each view is one statement and writes nothing.
// Every list is keyset-paginated (shared/observability/cursor.ts) and bounded to 100 rows and PAGE_BYTES; each JSON
// document is built by one statement (queryDoc), so values read the same on every driver.
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { tsParam, uuidParam } from '../../core/db/sql-values.ts';
import { notFound } from '../../core/errors.ts';
import { type Bounded, boundedArray, LIST_BYTES, PAGE_BYTES, pageOf, queryDoc } from '../bounds.ts';
import {
  ANY_RE,
  cursorKey,
  decodeCursor,
  encodeCursor,
  filterHash,
  ID_RE,
  iso,
  isoUs,
  likePattern,
  TS_RE,
  UUID_RE,
} from '../cursor.ts';
import { rangeOf } from '../ranges.ts';
import { callCountsSql } from '../rollups/rollups.ts';
import type { FleetChangesQuery, ListAgentsQuery, ListDevicesQuery, ListMcpsQuery } from '../schemas.ts';
import { agentStatsSql, deviceCountsSql, fleetTailCtes, mcpStatsSql, reportedSql } from './stats.ts';

const and = (parts: SQL[]): SQL => (parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`);

/** The online threshold of a request: seen within `device.online_threshold` of now. */
function threshold(config: Config, now: Date) {
  const ms = config.device.online_threshold;
  return { ms, since: new Date(now.getTime() - ms), seconds: Math.round(ms / 1000) };
}

const statusSql = (since: Date): SQL =>
  sql`CASE WHEN NOT ${reportedSql('d')} THEN 'never_reported'
    WHEN d.last_seen_at >= ${tsParam(since)} THEN 'online' ELSE 'offline' END`;

const deviceJson = (
  since: Date,
): SQL => sql`json_build_object('id', d.id::text, 'serial_number', d.serial_number,
  'brand', d.brand, 'model', d.model, 'owner_subject', d.owner_subject, 'owner_email', d.owner_email,
  'status', ${statusSql(since)}, 'last_seen_at', ${iso(sql`d.last_seen_at`)},
  'last_inventory_at', ${iso(sql`d.last_inventory_at`)}, 'last_event_at', ${iso(sql`d.last_event_at`)},
  'agent_version', d.agent_version,
  'created_at', ${iso(sql`d.created_at`)}, 'updated_at', ${iso(sql`d.updated_at`)},
  'agents', (SELECT count(*) FROM inventory_agents a WHERE a.device_id = d.id AND a.removed_at IS NULL)::int,
  'mcps', (SELECT count(*) FROM inventory_mcps m WHERE m.device_id = d.id AND m.removed_at IS NULL)::int)`;

export async function listDevices(db: Db, config: Config, query: ListDevicesQuery, now = new Date()) {
  const t = threshold(config, now);
  const fh = filterHash(query);
  const where: SQL[] = [];
  if (query.owner) where.push(sql`(d.owner_email = ${query.owner} OR d.owner_subject = ${query.owner})`);
  if (query.q) {
    const p = likePattern(query.q);
    where.push(sql`(d.serial_number ILIKE ${p} OR d.model ILIKE ${p} OR d.owner_email ILIKE ${p})`);
  }
  if (query.agent_type) {
    where.push(sql`EXISTS (SELECT 1 FROM inventory_agents a
      WHERE a.device_id = d.id AND a.agent_type = ${query.agent_type} AND a.removed_at IS NULL)`);
  }
  if (query.mcp) {
    where.push(sql`EXISTS (SELECT 1 FROM inventory_mcps m
      WHERE m.device_id = d.id AND m.name = ${query.mcp} AND m.removed_at IS NULL)`);
  }
  // A status is tested on the last-seen sort key (a device never seen sorts as the epoch) and on reportedSql as
  // written, which every sort order's index holds after its key (shared/core/db/schema.ts): with the last-seen sort a
  // status is a range of its index, with the others the index entries are filtered before any row is read.
  // `IS FALSE` rather than NOT (the same, as reportedSql is never NULL): the planner rewrites NOT (a OR b) to
  // (NOT a AND NOT b), which no index column matches.
  if (query.status === 'never_reported') where.push(sql`${reportedSql('d')} IS FALSE`);
  const lastSeenKey = sql`coalesce(d.last_seen_at, 'epoch'::timestamptz)`;
  if (query.status === 'online') {
    where.push(sql`${reportedSql('d')} AND ${lastSeenKey} >= ${tsParam(t.since)}`);
  }
  if (query.status === 'offline') {
    where.push(sql`${reportedSql('d')} AND ${lastSeenKey} < ${tsParam(t.since)}`);
  }
  if (query.updated_since) where.push(sql`d.updated_at >= ${query.updated_since}::timestamptz`);
  if (query.last_seen_before) where.push(sql`d.last_seen_at < ${query.last_seen_before}::timestamptz`);
  const field = query.sort.replace('-', '');
  const desc = query.sort.startsWith('-');
  const key =
    field === 'serial' ? sql`d.serial_number` : field === 'created' ? sql`d.created_at` : lastSeenKey;
  const keyText = field === 'serial' ? sql`d.serial_number` : isoUs(key);
  if (query.cursor) {
    const [k, id] = decodeCursor(cursorKey(config), query.cursor, 'devices', fh, [
      field === 'serial' ? ANY_RE : TS_RE,
      UUID_RE,
    ]);
    const ck = field === 'serial' ? sql`${k}::text` : sql`${k}::timestamptz`;
    where.push(
      desc ? sql`(${key}, d.id) < (${ck}, ${id}::uuid)` : sql`(${key}, d.id) > (${ck}, ${id}::uuid)`,
    );
  }
  const dir = sql.raw(desc ? 'DESC' : 'ASC');
  const rows = await queryDoc<Bounded<{ j: unknown; k: string; id: string }>>(
    db,
    sql`SELECT ${boundedArray(
      sql`SELECT json_build_object('j', ${deviceJson(t.since)}, 'k', ${keyText}, 'id', d.id::text) AS o,
        row_number() OVER (ORDER BY ${key} ${dir}, d.id ${dir}) AS rn
      FROM (SELECT * FROM devices d WHERE ${and(where)} ORDER BY ${key} ${dir}, d.id ${dir}
        LIMIT ${query.limit + 1}) d`,
      PAGE_BYTES,
    )} AS j`,
  );
  const page = paginate(rows, query.limit, (r) =>
    encodeCursor(cursorKey(config), 'devices', [r.k, r.id], fh),
  );
  return {
    devices: page.items.map((r) => r.j),
    next_cursor: page.next,
    limit: query.limit,
    online_threshold_seconds: t.seconds,
    as_of: now.toISOString(),
  };
}

function paginate<T>(rows: Bounded<T> | null, limit: number, cursorOf: (last: T) => string) {
  const { items, more } = pageOf(rows, limit);
  const last = items[items.length - 1];
  return { items, next: more && last ? cursorOf(last) : null };
}

/** Current agents and MCPs a device detail lists at most (and their byte budgets); `*_total` counts them all. */
const DEVICE_AGENTS_MAX = 200;
const DEVICE_MCPS_MAX = 500;
/** A device's MCP rows in order: the same name in several scopes or configs side by side. */
const DEVICE_MCP_ORDER = sql.raw('m.agent_type, m.name, m.scope NULLS FIRST, m.fingerprint NULLS FIRST');

/** An MCP row's source identity as JSON, or null when its agent reported none. */
const sourceJson = (m: string): SQL =>
  sql.raw(`CASE WHEN ${m}.source_type IS NULL THEN NULL ELSE json_strip_nulls(json_build_object('type', ${m}.source_type,
    'name', ${m}.source_name, 'version', ${m}.source_version)) END`);

/**
 * One device: certificate, owner, current agents and MCPs with first / last seen (at most 200 agents and 500 MCPs,
 * within 128 / 256 KiB, with their totals and a truncated flag), and its 20 latest events.
 */
export async function getDevice(db: Db, config: Config, id: string, now = new Date()) {
  const t = threshold(config, now);
  const doc = await queryDoc<{
    agents: Bounded<unknown>;
    mcps: Bounded<unknown>;
    agents_total: number;
    mcps_total: number;
    [key: string]: unknown;
  } | null>(
    db,
    sql`SELECT json_build_object(
      'device', ${deviceJson(t.since)},
      'certificate', json_build_object('fingerprint', d.certificate_fingerprint, 'key_type', d.key_type,
        'not_before', ${iso(sql`d.cert_not_before`)}, 'not_after', ${iso(sql`d.cert_not_after`)},
        'valid_now', d.cert_not_before <= ${tsParam(now)} AND d.cert_not_after > ${tsParam(now)}),
      'owner', json_build_object('subject', d.owner_subject, 'email', d.owner_email),
      'spool', CASE WHEN d.spool_reported_at IS NULL THEN NULL ELSE json_build_object('dropped', d.spool_dropped,
        'torn', d.spool_torn, 'refused', d.spool_refused, 'reported_at', ${iso(sql`d.spool_reported_at`)}) END,
      'agents', ${boundedArray(
        sql`SELECT json_build_object('agent_type', a.agent_type, 'display_name', a.display_name,
            'version', a.version, 'capture', a.capture, 'first_seen_at', ${iso(sql`a.first_seen_at`)}, 'last_seen_at', ${iso(sql`a.last_seen_at`)}) AS o,
            row_number() OVER (ORDER BY a.agent_type) AS rn
          FROM (SELECT * FROM inventory_agents a WHERE a.device_id = d.id AND a.removed_at IS NULL
            ORDER BY a.agent_type LIMIT ${DEVICE_AGENTS_MAX}) a`,
        4 * LIST_BYTES,
      )},
      'agents_total', (SELECT count(*) FROM inventory_agents a WHERE a.device_id = d.id AND a.removed_at IS NULL)::int,
      'mcps', ${boundedArray(
        sql`SELECT json_build_object('agent_type', m.agent_type, 'name', m.name, 'enabled', m.enabled,
            'transport', m.transport, 'scope', m.scope, 'source', ${sourceJson('m')},
            'fingerprint', m.fingerprint, 'first_seen_at', ${iso(sql`m.first_seen_at`)},
            'last_seen_at', ${iso(sql`m.last_seen_at`)}) AS o,
            row_number() OVER (ORDER BY ${DEVICE_MCP_ORDER}) AS rn
          FROM (SELECT * FROM inventory_mcps m WHERE m.device_id = d.id AND m.removed_at IS NULL
            ORDER BY ${DEVICE_MCP_ORDER} LIMIT ${DEVICE_MCPS_MAX}) m`,
        8 * LIST_BYTES,
      )},
      'mcps_total', (SELECT count(*) FROM inventory_mcps m WHERE m.device_id = d.id AND m.removed_at IS NULL)::int,
      'recent_events', (SELECT coalesce(json_agg(json_build_object('id', e.id::text,
          'event_time', ${iso(sql`e.event_time`)}, 'agent_type', e.agent_type, 'mcp_name', e.mcp_name,
          'tool', e.tool, 'event_type', e.event_type, 'result', e.result, 'deny_code', e.deny_code,
          'duration_ms', e.duration_ms) ORDER BY e.event_time DESC, e.id DESC), '[]'::json)
        FROM (SELECT * FROM observability_events e WHERE e.device_id = d.id
              ORDER BY e.event_time DESC NULLS LAST, e.id DESC NULLS LAST LIMIT 20) e),
      'online_threshold_seconds', ${t.seconds}::int,
      'as_of', ${now.toISOString()}::text) AS j
    FROM devices d WHERE d.id = ${uuidParam(id)}`,
  );
  if (!doc) throw notFound('No device with this id.');
  const { agents, mcps, agents_total, mcps_total, ...rest } = doc;
  return {
    ...rest,
    agents: agents.items,
    agents_total,
    agents_truncated: agents.items.length < agents_total,
    mcps: mcps.items,
    mcps_total,
    mcps_truncated: mcps.items.length < mcps_total,
  };
}

/** The call window of agents / MCPs: `from`..`to`, default the last 7 days. */
function callWindow(query: { from?: string | undefined; to?: string | undefined }, now: Date) {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 7 * 86_400_000);
  return { from, to };
}

/**
 * Calls per `dim` in the window, from the rollups and the events not folded yet: whole days from daily rows, the partial days at both ends from
 * hourly rows (the window is widened to whole hours).
 */
function callsCte(dim: 'agent_type' | 'mcp_name', from: Date, to: Date): SQL {
  const r = rangeOf(from, to, 'hour');
  return sql`SELECT ${sql.raw(dim)} AS name, sum(calls)::bigint AS calls,
      (sum(calls) FILTER (WHERE result = 'denied'))::bigint AS denied,
      (sum(calls) FILTER (WHERE result = 'error'))::bigint AS errors,
      sum(tokens_in)::bigint AS tokens_in, sum(tokens_out)::bigint AS tokens_out
    FROM ${callCountsSql(r.rollupWhere, tsParam(r.from), tsParam(r.to))} c GROUP BY 1`;
}

/** One row per agent type: devices, MCP counts (enabled / disabled), transports, first / last seen, calls. */
export async function listAgents(
  db: Db,
  config: Pick<Config, 'auth'>,
  query: ListAgentsQuery,
  now = new Date(),
) {
  const fh = filterHash(query);
  const w = callWindow(query, now);
  const where: SQL[] = [sql`a.devices > 0`];
  if (query.updated_since) where.push(sql`a.last_seen_at >= ${query.updated_since}::timestamptz`);
  if (query.cursor) {
    const [name] = decodeCursor(cursorKey(config), query.cursor, 'agents', fh, [ANY_RE]);
    where.push(sql`a.agent_type > ${name}`);
  }
  // From the fleet counters (stats.ts): the agent type's MCP rows are its ('', type, '') key, its distinct MCPs its
  // (name, type, '') keys, its transports its ('', type, transport) keys.
  const rows = await queryDoc<Bounded<{ agent_type: string }>>(
    db,
    sql`WITH ${fleetTailCtes()}, calls AS (${callsCte('agent_type', w.from, w.to)}),
      ag AS (SELECT a.agent_type, a.devices, a.first_seen_at, a.last_seen_at FROM ${agentStatsSql()} a
        WHERE ${and(where)} ORDER BY a.agent_type LIMIT ${query.limit + 1}),
      mc AS (SELECT s.agent_type,
          sum(s.enabled_installs) FILTER (WHERE s.name = '' AND s.transport = '')::int AS enabled,
          sum(s.installs - s.enabled_installs) FILTER (WHERE s.name = '' AND s.transport = '')::int AS disabled,
          (count(*) FILTER (WHERE s.name <> '' AND s.transport = ''))::int AS distinct_mcps,
          json_agg(s.transport ORDER BY s.transport) FILTER (WHERE s.name = '' AND s.transport <> '') AS transports
        FROM ${mcpStatsSql()} s WHERE s.agent_type IN (SELECT agent_type FROM ag) AND s.devices > 0
        GROUP BY s.agent_type)
    SELECT ${boundedArray(
      sql`SELECT json_build_object('agent_type', ag.agent_type, 'devices', ag.devices,
          'mcps', json_build_object('distinct', coalesce(mc.distinct_mcps, 0), 'enabled', coalesce(mc.enabled, 0),
            'disabled', coalesce(mc.disabled, 0)),
          'transports', coalesce(mc.transports, '[]'::json),
          'first_seen_at', ${iso(sql`ag.first_seen_at`)}, 'last_seen_at', ${iso(sql`ag.last_seen_at`)},
          'calls', coalesce(c.calls, 0), 'denied', coalesce(c.denied, 0), 'errors', coalesce(c.errors, 0),
          'tokens_in', coalesce(c.tokens_in, 0), 'tokens_out', coalesce(c.tokens_out, 0)) AS o,
          row_number() OVER (ORDER BY ag.agent_type) AS rn
        FROM ag LEFT JOIN mc USING (agent_type) LEFT JOIN calls c ON c.name = ag.agent_type`,
      PAGE_BYTES,
    )} AS j`,
  );
  const page = paginate(rows, query.limit, (r) =>
    encodeCursor(cursorKey(config), 'agents', [r.agent_type], fh),
  );
  return {
    agents: page.items,
    next_cursor: page.next,
    limit: query.limit,
    window: { from: w.from.toISOString(), to: w.to.toISOString() },
  };
}

const SIDE_LIST_MAX = 100;
/**
 * Agent types listed per MCP (agent_types_total counts them all). The slice is written `[1 : n]`: over the Data API,
 * `:20` reads as the named parameter 20 once a statement has that many.
 */
const MCP_AGENT_TYPES_MAX = 20;
/** Source identities listed per MCP name (sources_truncated says there are more). */
const MCP_SOURCES_MAX = 10;

/**
 * The distinct source identities (type, name, version) the fleet's current rows of MCP `name` report, the first
 * MCP_SOURCES_MAX + 1 of them: each found by one probe of inventory_mcps_source_idx past the previous one, so a
 * name on every device costs a dozen probes, not a read of its rows.
 */
const distinctSourcesSql = (name: SQL): SQL => {
  const key = sql.raw(`i.source_type, i.source_name, coalesce(i.source_version, '')`);
  const from = sql`FROM inventory_mcps i WHERE i.name = ${name} AND i.removed_at IS NULL AND i.source_type IS NOT NULL`;
  const max = sql.raw(String(MCP_SOURCES_MAX));
  return sql`WITH RECURSIVE r(t, n, v, k) AS (
      (SELECT ${key}, 1 ${from} ORDER BY ${key} LIMIT 1)
      UNION ALL
      SELECT x.t, x.n, x.v, r.k + 1 FROM r CROSS JOIN LATERAL
        (SELECT ${key} ${from} AND (${key}) > (r.t, r.n, r.v) ORDER BY ${key} LIMIT 1) AS x(t, n, v)
      WHERE r.k <= ${max})
    SELECT coalesce(json_agg(json_strip_nulls(json_build_object('type', t, 'name', n, 'version', nullif(v, '')))
          ORDER BY t, n, v)
        FILTER (WHERE k <= ${max}), '[]'::json) AS list,
      count(*) > ${max} AS more
    FROM r`;
};

/**
 * One row per MCP server name: devices where it is configured (enabled / disabled), transports, agent types,
 * first / last seen, the source identities its agents report (so that an official server and a fork of the same
 * name are told apart), and calls in the window (configured vs called). Also, over the whole fleet: `shadow` (called
 * in the window but configured on no device) and `configured_never_called` (configured, no call in the window),
 * each at most 100 names and 64 KiB (`*_total` counts them all). From the fleet counters (shared/observability/fleet/stats.ts): with the
 * filters agent_type and transport ('' when absent), a name's row is its (name, agent_type, transport) key, its
 * transports and agent types the keys that name one of them.
 */
export async function listMcps(db: Db, config: Pick<Config, 'auth'>, query: ListMcpsQuery, now = new Date()) {
  const fh = filterHash(query);
  const w = callWindow(query, now);
  const agentType = query.agent_type ?? '';
  const transport = query.transport ?? '';
  const where: SQL[] = [
    sql`m.agent_type = ${agentType}`,
    sql`m.transport = ${transport}`,
    sql`m.name <> ''`,
    sql`m.devices > 0`,
  ];
  if (query.cursor) {
    const [name] = decodeCursor(cursorKey(config), query.cursor, 'mcps', fh, [ANY_RE]);
    where.push(sql`m.name > ${name}`);
  }
  if (query.updated_since) where.push(sql`m.last_seen_at >= ${query.updated_since}::timestamptz`);
  const doc = await queryDoc<{
    mcps: Bounded<{ name: string }>;
    shadow: Bounded<unknown>;
    unused: Bounded<unknown>;
    shadow_total: number;
    unused_total: number;
  }>(
    db,
    sql`WITH ${fleetTailCtes()}, calls AS (${callsCte('mcp_name', w.from, w.to)}),
      configured AS (SELECT name, devices FROM ${mcpStatsSql()} c
        WHERE agent_type = '' AND transport = '' AND name <> '' AND devices > 0),
      mp AS (SELECT m.name, m.devices, m.enabled_devices, m.disabled_devices, m.first_seen_at, m.last_seen_at
        FROM ${mcpStatsSql()} m WHERE ${and(where)} ORDER BY m.name LIMIT ${query.limit + 1}),
      sides AS (SELECT s.name,
          json_agg(s.transport ORDER BY s.transport)
            FILTER (WHERE s.agent_type = ${agentType} AND s.transport <> '') AS transports,
          (count(*) FILTER (WHERE s.transport = ${transport} AND s.agent_type <> ''))::int AS agent_types_total,
          (array_agg(s.agent_type ORDER BY s.agent_type)
            FILTER (WHERE s.transport = ${transport} AND s.agent_type <> ''))[1 : ${sql.raw(String(MCP_AGENT_TYPES_MAX))}]
            AS agent_types
        FROM ${mcpStatsSql()} s WHERE s.name IN (SELECT name FROM mp) AND s.devices > 0 GROUP BY s.name),
      srcs AS (SELECT mp.name, x.list, x.more FROM mp CROSS JOIN LATERAL (${distinctSourcesSql(sql`mp.name`)}) x),
      shadow AS (SELECT c.* FROM calls c WHERE c.calls > 0 AND c.name NOT IN (SELECT name FROM configured)),
      unused AS (SELECT cf.name, cf.devices FROM configured cf
        WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.name = cf.name AND c.calls > 0))
    SELECT json_build_object(
      'mcps', ${boundedArray(
        sql`SELECT json_build_object('name', mp.name, 'devices', mp.devices,
            'enabled_devices', mp.enabled_devices, 'disabled_devices', mp.disabled_devices,
            'transports', coalesce(sd.transports, '[]'::json), 'agent_types', to_json(coalesce(sd.agent_types, '{}')),
            'agent_types_total', coalesce(sd.agent_types_total, 0),
            'sources', coalesce(sr.list, '[]'::json), 'sources_truncated', coalesce(sr.more, false),
            'first_seen_at', ${iso(sql`mp.first_seen_at`)}, 'last_seen_at', ${iso(sql`mp.last_seen_at`)},
            'calls', coalesce(c.calls, 0), 'denied', coalesce(c.denied, 0), 'errors', coalesce(c.errors, 0),
            'tokens_in', coalesce(c.tokens_in, 0), 'tokens_out', coalesce(c.tokens_out, 0),
            'usage', CASE WHEN coalesce(c.calls, 0) > 0 THEN 'configured_and_called' ELSE 'configured_never_called' END)
            AS o, row_number() OVER (ORDER BY mp.name) AS rn
          FROM mp LEFT JOIN sides sd ON sd.name = mp.name LEFT JOIN srcs sr ON sr.name = mp.name
            LEFT JOIN calls c ON c.name = mp.name`,
        PAGE_BYTES,
      )},
      'shadow', ${boundedArray(
        sql`SELECT json_build_object('name', s.name, 'calls', s.calls, 'denied', coalesce(s.denied, 0),
            'errors', coalesce(s.errors, 0)) AS o, row_number() OVER (ORDER BY s.calls DESC, s.name) AS rn
          FROM (SELECT * FROM shadow ORDER BY calls DESC, name LIMIT ${SIDE_LIST_MAX}) s`,
        2 * LIST_BYTES,
      )},
      'shadow_total', (SELECT count(*) FROM shadow)::int,
      'unused', ${boundedArray(
        sql`SELECT json_build_object('name', u.name, 'devices', u.devices) AS o,
            row_number() OVER (ORDER BY u.name) AS rn
          FROM (SELECT * FROM unused ORDER BY name LIMIT ${SIDE_LIST_MAX}) u`,
        2 * LIST_BYTES,
      )},
      'unused_total', (SELECT count(*) FROM unused)::int) AS j`,
  );
  const page = paginate(doc.mcps, query.limit, (r) => encodeCursor(cursorKey(config), 'mcps', [r.name], fh));
  return {
    mcps: page.items,
    next_cursor: page.next,
    limit: query.limit,
    window: { from: w.from.toISOString(), to: w.to.toISOString() },
    shadow: doc.shadow.items,
    shadow_total: doc.shadow_total,
    configured_never_called: doc.unused.items,
    configured_never_called_total: doc.unused_total,
  };
}

/**
 * Devices total / online / offline / never reported / new in 24 h, agents by type, MCPs by transport, events 24 h.
 * The device counts are the statuses of statusSql, from the device counters (stats.ts) with the devices not folded
 * into them yet.
 */
export async function fleetSummary(db: Db, config: Config, now = new Date()) {
  const t = threshold(config, now);
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const r = rangeOf(dayAgo, now, 'hour');
  const doc = await queryDoc<Record<string, unknown>>(
    db,
    sql`WITH ${fleetTailCtes()}, ev AS (SELECT coalesce(sum(calls), 0)::bigint AS calls,
          coalesce(sum(calls) FILTER (WHERE result = 'denied'), 0)::bigint AS denied,
          coalesce(sum(calls) FILTER (WHERE result = 'error'), 0)::bigint AS errors,
          coalesce(sum(tokens_in), 0)::bigint AS tokens_in, coalesce(sum(tokens_out), 0)::bigint AS tokens_out
        FROM ${callCountsSql(r.rollupWhere, tsParam(r.from), tsParam(r.to))} c)
    SELECT json_build_object(
      'devices', ${deviceCountsSql(tsParam(t.since), tsParam(dayAgo))},
      'agents_by_type', (SELECT coalesce(json_agg(json_build_object('agent_type', agent_type, 'devices', devices)
          ORDER BY devices DESC, agent_type), '[]'::json)
        FROM (SELECT agent_type, devices FROM ${agentStatsSql()} a WHERE devices > 0
              ORDER BY devices DESC, agent_type LIMIT 100) x),
      'mcps_by_transport', (SELECT coalesce(json_agg(json_build_object('transport', t.transport,
          'servers', (SELECT count(*) FROM ${mcpStatsSql()} s WHERE s.agent_type = '' AND s.transport = t.transport
            AND s.name <> '' AND s.devices > 0)::int,
          'devices', t.devices, 'installs', t.installs) ORDER BY t.transport), '[]'::json)
        FROM ${mcpStatsSql()} t WHERE t.name = '' AND t.agent_type = '' AND t.transport <> '' AND t.devices > 0),
      'events_24h', (SELECT json_build_object('calls', calls, 'denied', denied, 'errors', errors,
          'tokens_in', tokens_in, 'tokens_out', tokens_out,
          'deny_rate', CASE WHEN calls > 0 THEN round(denied::numeric / calls, 4) ELSE 0 END,
          'from', ${r.from.toISOString()}::text, 'to', ${r.to.toISOString()}::text) FROM ev),
      'online_threshold_seconds', ${t.seconds}::int,
      'as_of', ${now.toISOString()}::text) AS j`,
  );
  return doc;
}

/** The inventory change feed, newest first, keyset-paginated on (at, id). */
export async function fleetChanges(db: Db, config: Pick<Config, 'auth'>, query: FleetChangesQuery) {
  const fh = filterHash(query);
  const where: SQL[] = [];
  if (query.device_id) where.push(sql`c.device_id = ${uuidParam(query.device_id)}`);
  if (query.kind) where.push(sql`c.kind = ${query.kind}`);
  if (query.agent_type) where.push(sql`c.agent_type = ${query.agent_type}`);
  if (query.mcp) where.push(sql`c.mcp_name = ${query.mcp}`);
  if (query.since) where.push(sql`c.at >= ${query.since}::timestamptz`);
  if (query.cursor) {
    const [at, id] = decodeCursor(cursorKey(config), query.cursor, 'changes', fh, [TS_RE, ID_RE]);
    where.push(sql`(c.at, c.id) < (${at}::timestamptz, ${id}::bigint)`);
  }
  const rows = await queryDoc<Bounded<{ id: string; k: string }>>(
    db,
    sql`SELECT ${boundedArray(
      sql`SELECT json_build_object('id', c.id::text, 'k', ${isoUs(sql`c.at`)}, 'at', ${iso(sql`c.at`)},
          'kind', c.kind, 'device_id', c.device_id::text, 'serial_number', d.serial_number,
          'agent_type', c.agent_type, 'mcp_name', c.mcp_name) AS o,
          row_number() OVER (ORDER BY c.at DESC, c.id DESC) AS rn
        FROM (SELECT * FROM inventory_changes c WHERE ${and(where)} ORDER BY c.at DESC, c.id DESC
          LIMIT ${query.limit + 1}) c JOIN devices d ON d.id = c.device_id`,
      PAGE_BYTES,
    )} AS j`,
  );
  const page = paginate(rows, query.limit, (r) =>
    encodeCursor(cursorKey(config), 'changes', [r.k, r.id], fh),
  );
  return {
    changes: page.items.map(({ k: _k, ...rest }) => rest),
    next_cursor: page.next,
    limit: query.limit,
  };
}
