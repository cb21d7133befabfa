// The alert pass (the alerts/derive schedule; docs/policy.md, "Alerts"): derives alerts from the inventory rows
// reported since the last pass, and the denied-call spike from the folded minute series.
//
// Why a scheduled pass and not the inventory write: a change rolled out to the fleet touches the same alert row from
// every report, so deriving in the report's transaction would make reports wait on one another, and the report
// statement would carry the derivation's cost. The pass walks the rows by (last_seen_at, id) from its watermark, only
// up to `alerts.settle` ago: a report's time is taken before its statement runs, and it commits within
// db.statement_timeout, so no row can still appear behind the watermark. Each step is idempotent (the known servers,
// each device's last seen version and source, unique alerts and their devices), so a row read again changes nothing.
// A new policy version rewinds the watermark: every present server is checked against it once.
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows, type RowOf } from '../core/db/query.ts';
import { jsonParam, tsParam } from '../core/db/sql-values.ts';
import { currentPolicy } from '../policy/policy.ts';
import { type PolicyDocument, ruleMatches } from '../policy/rules.ts';
import { type AlertHit, raiseAlerts } from './alerts.ts';

const BATCH_ROWS = 1000;
const START = { at: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/** A server as the pass last saw it on a device (alert_server_state). */
const SERVER_STATE_ROW = {
  device_id: col.text,
  agent_type: col.text,
  name: col.text,
  scope: col.text,
  source_type: col.nullable(col.text),
  source_name: col.nullable(col.text),
  source_version: col.nullable(col.text),
};
/** An inventory row the pass reads: the server, and its keyset position. */
const INVENTORY_ROW = { id: col.text, at: col.text, ...SERVER_STATE_ROW };
type InventoryRow = RowOf<typeof INVENTORY_ROW>;

/** A server's identity across the fleet: its source identity `<type>:<name>`, or `name:<name>` without one. */
export const serverIdentity = (r: Pick<InventoryRow, 'source_type' | 'source_name' | 'name'>): string =>
  r.source_type && r.source_name ? `${r.source_type}:${r.source_name}` : `name:${r.name}`;

/** The facts a rule may name that the inventory does not know: the tool, the developer, the group, the tags. */
const CALL_FACTS = ['tool', 'actor', 'group', 'device_tag'] as const;

/**
 * The rule that denies every call to a server (whatever the tool, developer, group or tags), or null when some call
 * could be allowed. Enforce rules in order: one that names none of the call's facts decides; an allow rule that names
 * one may allow some calls; a deny rule that names one denies only some, and the next rules are read.
 */
export function serverDenial(
  policy: PolicyDocument,
  server: { server: string; agent_type: string; source?: string },
): { rule: string; reason: string } | null {
  for (const rule of policy.rules) {
    if (rule.mode === 'audit') continue;
    const serverPart = { ...rule.match };
    for (const fact of CALL_FACTS) delete serverPart[fact];
    if (!ruleMatches(serverPart, server)) continue;
    const partial = CALL_FACTS.some((fact) => rule.match[fact] !== undefined && rule.match[fact] !== '*');
    if (!partial) return rule.effect === 'deny' ? { rule: rule.id, reason: rule.reason } : null;
    if (rule.effect === 'allow') return null;
  }
  return policy.default.effect === 'deny' ? { rule: 'default', reason: policy.default.reason } : null;
}

/** Rows of `rows` (JSON, InventoryRow) as an SQL source of (kind, subject, device_id) for the hits `subjectOf` names. */
const deviceRows = (pairs: Array<{ kind: string; subject: string; device_id: string }>): SQL =>
  sql`SELECT kind, subject, device_id::uuid AS device_id
    FROM jsonb_to_recordset(${jsonParam(pairs)}) AS x(kind text, subject text, device_id text)`;

/** One batch: new servers, changed versions and sources, and servers the policy denies. */
async function deriveBatch(
  tx: Db,
  config: Pick<Config, 'alerts'>,
  rows: InventoryRow[],
  policy: { version: number; policy: PolicyDocument },
  now: Date,
): Promise<number> {
  const hits = new Map<string, AlertHit>();
  const pairs: Array<{ kind: string; subject: string; device_id: string }> = [];
  const hit = (h: AlertHit, deviceId: string) => {
    hits.set(`${h.kind}\n${h.subject}`, h);
    pairs.push({ kind: h.kind, subject: h.subject, device_id: deviceId });
  };

  // New servers: identities never recorded; devices join the alert while it is open.
  const identities = [...new Set(rows.map(serverIdentity))];
  const fresh = await queryRows(
    tx,
    sql`INSERT INTO alert_known_servers (identity, first_seen_at)
      SELECT i, ${tsParam(now)} FROM jsonb_array_elements_text(${jsonParam(identities)}) i ORDER BY i
      ON CONFLICT (identity) DO NOTHING RETURNING identity`,
    { identity: col.text },
  );
  const open = await queryRows(
    tx,
    sql`SELECT subject FROM alerts WHERE kind = 'new_server' AND status = 'open'
      AND subject IN (SELECT jsonb_array_elements_text(${jsonParam(identities)}))`,
    { subject: col.text },
  );
  const newIds = new Set([...fresh.map((r) => r.identity), ...open.map((r) => r.subject)]);
  for (const r of rows) {
    const identity = serverIdentity(r);
    if (newIds.has(identity))
      hit({ kind: 'new_server', subject: identity, details: { identity, name: r.name } }, r.device_id);
  }

  // Changes: each device's server (agent type, name, scope) against the version and source the pass saw last.
  const keys = rows.map((r) => ({
    device_id: r.device_id,
    agent_type: r.agent_type,
    name: r.name,
    scope: r.scope,
  }));
  const before = await queryRows(
    tx,
    sql`SELECT s.device_id::text AS device_id, s.agent_type, s.name, s.scope, s.source_type, s.source_name,
        s.source_version
      FROM alert_server_state s JOIN jsonb_to_recordset(${jsonParam(keys)})
        AS k(device_id uuid, agent_type text, name text, scope text)
        ON s.device_id = k.device_id AND s.agent_type = k.agent_type AND s.name = k.name AND s.scope = k.scope`,
    SERVER_STATE_ROW,
  );
  const keyOf = (r: Pick<InventoryRow, 'device_id' | 'agent_type' | 'name' | 'scope'>) =>
    JSON.stringify([r.device_id, r.agent_type, r.name, r.scope]);
  const seen = new Map(before.map((r) => [keyOf(r), r]));
  const latest = new Map<string, InventoryRow>();
  for (const r of rows) latest.set(keyOf(r), r);
  for (const r of latest.values()) {
    const old = seen.get(keyOf(r));
    if (!old) continue;
    const was = serverIdentity(old);
    const is = serverIdentity(r);
    if (was !== is) {
      const subject = `${r.name}: ${was} → ${is}`;
      hit({ kind: 'source_changed', subject, details: { name: r.name, from: was, to: is } }, r.device_id);
    } else if ((old.source_version ?? '') !== (r.source_version ?? '')) {
      const from = old.source_version ?? null;
      const to = r.source_version ?? null;
      const subject = `${is}: ${from ?? 'unpinned'} → ${to ?? 'unpinned'}`;
      hit(
        { kind: 'version_changed', subject, details: { identity: is, name: r.name, from, to } },
        r.device_id,
      );
    }
  }
  await tx.execute(sql`INSERT INTO alert_server_state AS s (device_id, agent_type, name, scope, source_type, source_name,
      source_version)
    SELECT device_id::uuid, agent_type, name, scope, source_type, source_name, source_version
    FROM jsonb_to_recordset(${jsonParam([...latest.values()])}) AS x(device_id text, agent_type text, name text,
      scope text, source_type text, source_name text, source_version text)
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (device_id, agent_type, name, scope) DO UPDATE SET source_type = EXCLUDED.source_type,
      source_name = EXCLUDED.source_name, source_version = EXCLUDED.source_version`);

  // Servers the policy in force denies outright.
  const verdicts = new Map<string, ReturnType<typeof serverDenial>>();
  for (const r of rows) {
    const source = r.source_type && r.source_name ? `${r.source_type}:${r.source_name}` : undefined;
    const key = JSON.stringify([r.name, r.agent_type, source ?? null]);
    if (!verdicts.has(key))
      verdicts.set(
        key,
        serverDenial(policy.policy, {
          server: r.name,
          agent_type: r.agent_type,
          ...(source ? { source } : {}),
        }),
      );
    const denial = verdicts.get(key);
    if (!denial) continue;
    const identity = serverIdentity(r);
    hit(
      {
        kind: 'denied_server',
        subject: `${r.name} (${identity}) denied by ${denial.rule}`,
        details: {
          name: r.name,
          identity,
          rule: denial.rule,
          reason: denial.reason,
          policy_version: policy.version,
        },
      },
      r.device_id,
    );
  }
  await raiseAlerts(tx, config, [...hits.values()], pairs.length ? deviceRows(pairs) : null, now);
  return hits.size;
}

/** What one pass did, for the log and the tests. */
export interface AlertPassResult {
  rows: number;
  hits: number;
  rewound: boolean;
  spike: boolean;
}

/**
 * The inventory part of the pass: batches of rows reported after the watermark and before now − settle, each in its
 * own transaction with the pass's state row locked (two passes never derive the same batch at once), at most
 * alerts.max_rows rows per call.
 */
export async function deriveInventoryAlerts(
  db: Db,
  config: Pick<Config, 'alerts'>,
  now = new Date(),
): Promise<Omit<AlertPassResult, 'spike'>> {
  const until = new Date(now.getTime() - config.alerts.settle);
  const policy = await currentPolicy(db);
  const result = { rows: 0, hits: 0, rewound: false };
  while (result.rows < config.alerts.max_rows) {
    const done = await db.transaction(async (tx) => {
      const [state] = await queryRows(
        tx,
        // to_char gives NULL for the '-infinity' a rewind leaves (before any server was seen): keep it as text.
        sql`SELECT CASE WHEN isfinite(watermark)
              THEN to_char(watermark AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') ELSE watermark::text END AS at,
            watermark_id::text AS id, policy_version FROM alert_pass_state WHERE id = 1 FOR UPDATE`,
        { at: col.text, id: col.text, policy_version: col.number },
      );
      if (!state) return true;
      let from = { at: state.at, id: state.id };
      if (Number(state.policy_version) !== policy.version) {
        from = START;
        result.rewound = true;
        await tx.execute(sql`UPDATE alert_pass_state SET policy_version = ${policy.version}::int,
          watermark = '-infinity', watermark_id = ${START.id}::uuid WHERE id = 1`);
      }
      const rows = await queryRows(
        tx,
        sql`SELECT m.id::text AS id,
            to_char(m.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
            m.device_id::text AS device_id, m.agent_type, m.name, coalesce(m.scope, '') AS scope, m.source_type,
            m.source_name, m.source_version
          FROM inventory_mcps m
          WHERE (m.last_seen_at, m.id) > (${from.at}::timestamptz, ${from.id}::uuid)
            AND m.last_seen_at <= ${tsParam(until)} AND m.removed_at IS NULL
          ORDER BY m.last_seen_at, m.id LIMIT ${BATCH_ROWS}`,
        INVENTORY_ROW,
      );
      const last = rows.at(-1);
      if (!last) return true;
      result.rows += rows.length;
      result.hits += await deriveBatch(tx, config, rows, policy, now);
      await tx.execute(sql`UPDATE alert_pass_state SET watermark = ${last.at}::timestamptz,
        watermark_id = ${last.id}::uuid WHERE id = 1`);
      return rows.length < BATCH_ROWS;
    });
    if (done) break;
  }
  return result;
}

/**
 * Tool definitions (the rug pull): for one server identity and version, one tool reported with more than one
 * definition hash, whether it changed on a device or differs between devices. A new version with a new definition is
 * an upgrade (version_changed), not this. One alert per (identity, version, tool), with every device that reported
 * the tool under it; its details list each hash with its devices.
 */
export async function deriveToolAlerts(
  db: Db,
  config: Pick<Config, 'alerts'>,
  now = new Date(),
): Promise<number> {
  const identity = sql`CASE WHEN t.source_type IS NOT NULL AND t.source_name IS NOT NULL
    THEN t.source_type || ':' || t.source_name ELSE 'name:' || t.mcp_name END`;
  const found = await queryRows(
    db,
    sql`WITH t AS (
        SELECT ${identity} AS identity, coalesce(t.source_version, '') AS version, t.tool_name AS tool,
          t.definition_hash AS hash, t.device_id
        FROM inventory_mcp_tools t),
      changed AS (
        SELECT identity, version, tool FROM t GROUP BY 1, 2, 3 HAVING count(DISTINCT hash) > 1)
      SELECT c.identity, c.version, c.tool,
        (SELECT jsonb_agg(jsonb_build_object('hash', h.hash, 'devices', h.n) ORDER BY h.n DESC, h.hash)
          FROM (SELECT hash, count(DISTINCT device_id)::int AS n FROM t
            WHERE (t.identity, t.version, t.tool) = (c.identity, c.version, c.tool) GROUP BY hash) h) AS hashes,
        (SELECT jsonb_agg(DISTINCT t.device_id::text) FROM t
          WHERE (t.identity, t.version, t.tool) = (c.identity, c.version, c.tool)) AS device_ids
      FROM changed c ORDER BY 1, 2, 3 LIMIT 1000`,
    {
      identity: col.text,
      version: col.text,
      tool: col.text,
      hashes: col.json<Array<{ hash: string; devices: number }>>(),
      device_ids: col.json<string[]>(),
    },
  );
  if (found.length === 0) return 0;
  const hits: AlertHit[] = [];
  const pairs: Array<{ kind: string; subject: string; device_id: string }> = [];
  for (const f of found) {
    const { hashes, device_ids: devices } = f;
    const subject = `${f.identity}@${f.version || 'unpinned'}: ${f.tool}`;
    hits.push({
      kind: 'tool_definition_changed',
      subject,
      details: { identity: f.identity, version: f.version || null, tool: f.tool, hashes },
    });
    for (const device_id of devices) pairs.push({ kind: 'tool_definition_changed', subject, device_id });
  }
  await db.transaction((tx) => raiseAlerts(tx, config, hits, deviceRows(pairs), now));
  return hits.length;
}

/**
 * The spike check: denied calls in the last whole minutes of alerts.spike.window, from the folded minute series,
 * against the average per window over the baseline before it. A spike opens a denied_spike alert named after the
 * window where it started; while it goes on (the previous check was a spike too), the same alert is updated.
 */
export async function deriveSpike(
  db: Db,
  config: Pick<Config, 'alerts'>,
  now = new Date(),
): Promise<boolean> {
  const { window, baseline, factor, min_denied } = config.alerts.spike;
  const end = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const start = new Date(end.getTime() - window);
  const baseStart = new Date(start.getTime() - baseline);
  return db.transaction(async (tx) => {
    // One check at a time: two would both open an alert for the same spike.
    await tx.execute(sql`SELECT id FROM alert_pass_state WHERE id = 1 FOR UPDATE`);
    const [counts] = await queryRows(
      tx,
      sql`SELECT coalesce(sum(denied) FILTER (WHERE bucket >= ${tsParam(start)}), 0)::text AS recent,
          coalesce(sum(denied) FILTER (WHERE bucket < ${tsParam(start)}), 0)::text AS base
        FROM observability_series_totals
        WHERE grain = 'minute' AND bucket >= ${tsParam(baseStart)} AND bucket < ${tsParam(end)}`,
      { recent: col.text, base: col.text },
    );
    const recent = Number(counts?.recent ?? 0);
    const average = (Number(counts?.base ?? 0) * window) / baseline;
    const spike = recent >= min_denied && recent >= factor * average;
    if (!spike) return false;
    // The spike goes on: the open one seen at the previous check (within a window) keeps its name.
    const [ongoing] = await queryRows(
      tx,
      sql`SELECT subject FROM alerts WHERE kind = 'denied_spike' AND status = 'open'
        AND last_seen_at >= ${tsParam(new Date(now.getTime() - 2 * window))}
        ORDER BY last_seen_at DESC LIMIT 1`,
      { subject: col.text },
    );
    const subject = ongoing?.subject ?? `denied calls from ${start.toISOString()}`;
    const details = {
      denied: recent,
      baseline_per_window: Math.round(average * 100) / 100,
      window_s: window / 1000,
      from: start.toISOString(),
      to: end.toISOString(),
    };
    await raiseAlerts(
      tx,
      config,
      [{ kind: 'denied_spike', subject, details }],
      sql`SELECT DISTINCT 'denied_spike' AS kind, ${subject}::text AS subject, e.device_id
        FROM observability_events e
        JOIN devices d ON d.id = e.device_id
        WHERE e.event_time >= ${tsParam(start)} AND e.event_time < ${tsParam(end)} AND e.result = 'denied'
        LIMIT 10000`,
      now,
    );
    return true;
  });
}
