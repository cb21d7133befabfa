// The fleet counters (shared/observability/fleet/stats.ts) against a model, on every driver: random inventory reports go
// through the real report statement (replaceInventory), folds of a few rows at a time split devices across folds,
// and after each round the counters equal what this file computes in JS from the inventories it reported, as a read
// sees them before the fold (the counters with the rows not folded yet) and as stored after it. A rebuild gives the
// same counts. On PostgreSQL and the Data API, a report still open when a fold runs keeps its rows for a
// later fold, and reports of many devices at once, with folds running beside them, are all counted once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rng } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import type { VerifiedDeviceRequest } from '#shared/devices/enrollment.ts';
import { ingestEvents } from '#shared/devices/events.ts';
import { replaceInventory } from '#shared/devices/inventory.ts';
import type { InventoryBody, ObservabilityEventInput } from '#shared/devices/schemas.ts';
import { fleetSummary, listMcps } from '#shared/observability/fleet/fleet.ts';
import {
  agentStatsSql,
  fleetTailCtes,
  foldFleetStats,
  mcpStatsSql,
  rebuildFleetStats,
} from '#shared/observability/fleet/stats.ts';
import { listMcpsQuery } from '#shared/observability/schemas.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { runs } from '#test/support/runs.ts';
import { testConfig } from '#test/support/service.ts';

const AGENTS = ['claude', 'cursor', 'copilot'] as const;
const NAMES = ['github', 'files', 'pg', 'slack'] as const;
const TRANSPORTS = ['stdio', 'http', 'sse'] as const;

interface Entry {
  agent: string;
  name: string;
  enabled: boolean;
  transport: (typeof TRANSPORTS)[number];
}
/** What a device reported last (its current inventory), and when each key was first and last reported. */
interface Model {
  agents: Map<number, string[]>;
  mcps: Map<number, Entry[]>;
  seen: Map<string, { first: number; last: number }>;
}

const keyOf = (name: string, agent: string, transport: string) => `${name}|${agent}|${transport}`;
const agentKey = (agent: string) => `agent:${agent}`;
/** A report body (the certificate and timestamp are checked before the domain, not by it). */
const inventoryBody = (agents: InventoryBody['agents']): InventoryBody => ({
  certificate: 'pem',
  clientTimestamp: new Date().toISOString(),
  agents,
});
/** The keys an entry counts under, each part or '' (any); written out here, apart from the SQL. */
const keysOfEntry = (e: Entry): string[] => {
  const keys: string[] = [];
  for (const n of [e.name, ''])
    for (const a of [e.agent, '']) for (const t of [e.transport, '']) keys.push(keyOf(n, a, t));
  return keys;
};

type Counts = Record<
  'devices' | 'enabled_devices' | 'disabled_devices' | 'installs' | 'enabled_installs',
  number
>;

function expectedMcpCounts(model: Model): Map<string, Counts> {
  const out = new Map<string, Counts>();
  for (const entries of model.mcps.values()) {
    const perDevice = new Map<string, { en: boolean; dis: boolean; n: number; ne: number }>();
    for (const e of entries) {
      for (const k of keysOfEntry(e)) {
        const c = perDevice.get(k) ?? { en: false, dis: false, n: 0, ne: 0 };
        c.en ||= e.enabled;
        c.dis ||= !e.enabled;
        c.n++;
        if (e.enabled) c.ne++;
        perDevice.set(k, c);
      }
    }
    for (const [k, c] of perDevice) {
      const t = out.get(k) ?? {
        devices: 0,
        enabled_devices: 0,
        disabled_devices: 0,
        installs: 0,
        enabled_installs: 0,
      };
      t.devices++;
      if (c.en) t.enabled_devices++;
      if (c.dis) t.disabled_devices++;
      t.installs += c.n;
      t.enabled_installs += c.ne;
      out.set(k, t);
    }
  }
  return out;
}

function expectedAgentDevices(model: Model): Map<string, number> {
  const out = new Map<string, number>();
  for (const agents of model.agents.values()) for (const a of agents) out.set(a, (out.get(a) ?? 0) + 1);
  return out;
}

/** The counters as stored, or as a read sees them: with the rows not folded yet (fleetTailCtes). */
const counterSources = (via: 'stored' | 'read') =>
  via === 'stored'
    ? { with: sql``, mcps: sql`fleet_mcp_stats`, agents: sql`fleet_agent_stats` }
    : { with: sql`WITH ${fleetTailCtes()} `, mcps: mcpStatsSql(), agents: agentStatsSql() };

async function assertCountersMatch(db: Db, model: Model, label: string, via: 'stored' | 'read' = 'stored') {
  const source = counterSources(via);
  const rows = await queryRows(
    db,
    sql`${source.with}SELECT name, agent_type, transport, devices, enabled_devices, disabled_devices, installs,
        enabled_installs, to_char(first_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS first,
        to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last
      FROM ${source.mcps} m`,
    {
      name: col.text,
      agent_type: col.text,
      transport: col.text,
      devices: col.number,
      enabled_devices: col.number,
      disabled_devices: col.number,
      installs: col.number,
      enabled_installs: col.number,
      first: col.nullable(col.text),
      last: col.nullable(col.text),
    },
  );
  const stored = new Map<string, Counts>();
  for (const r of rows) {
    const counts: Counts = {
      devices: Number(r.devices),
      enabled_devices: Number(r.enabled_devices),
      disabled_devices: Number(r.disabled_devices),
      installs: Number(r.installs),
      enabled_installs: Number(r.enabled_installs),
    };
    const k = keyOf(r.name, r.agent_type, r.transport);
    if (counts.devices > 0 || counts.installs > 0) stored.set(k, counts);
    else assert.deepEqual(Object.values(counts), [0, 0, 0, 0, 0], `${label}: ${k} has no device but counts`);
    // When any device first and last reported the key: checked where the key names no transport (a row's
    // transport can change between folds, and its times then go with its newest transport).
    const seen = model.seen.get(k);
    if (r.transport === '' && counts.devices > 0 && seen) {
      assert.equal(r.first, new Date(seen.first).toISOString(), `${label}: first_seen_at of ${k}`);
      assert.equal(r.last, new Date(seen.last).toISOString(), `${label}: last_seen_at of ${k}`);
    }
  }
  const expected = expectedMcpCounts(model);
  assert.deepEqual(
    Object.fromEntries([...stored].sort()),
    Object.fromEntries([...expected].sort()),
    `${label}: MCP counters`,
  );
  const agents = await queryRows(
    db,
    sql`${source.with}SELECT agent_type, devices,
        to_char(first_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS first,
        to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last
      FROM ${source.agents} a WHERE devices <> 0`,
    { agent_type: col.text, devices: col.number, first: col.text, last: col.text },
  );
  for (const a of agents) {
    const seen = model.seen.get(agentKey(a.agent_type));
    assert.ok(seen, `${label}: agent ${a.agent_type} was never reported`);
    assert.equal(
      a.first,
      new Date(seen.first).toISOString(),
      `${label}: first_seen_at of agent ${a.agent_type}`,
    );
    assert.equal(
      a.last,
      new Date(seen.last).toISOString(),
      `${label}: last_seen_at of agent ${a.agent_type}`,
    );
  }
  assert.deepEqual(
    Object.fromEntries(agents.map((a) => [a.agent_type, Number(a.devices)]).sort()),
    Object.fromEntries([...expectedAgentDevices(model)].sort()),
    `${label}: agent counters`,
  );
}

function randomInventory(r: () => number): { body: InventoryBody; agents: string[]; entries: Entry[] } {
  const agents = AGENTS.filter(() => r() < 0.6);
  const entries: Entry[] = [];
  const body = inventoryBody(
    agents.map((agent) => {
      const mcps = NAMES.filter(() => r() < 0.5).map((name) => {
        const e: Entry = {
          agent,
          name,
          enabled: r() < 0.7,
          transport: TRANSPORTS[Math.floor(r() * TRANSPORTS.length)] ?? 'stdio',
        };
        entries.push(e);
        return { name: e.name, enabled: e.enabled, transport: e.transport };
      });
      return { agentType: agent, displayName: agent, mcps };
    }),
  );
  return { body, agents, entries };
}

/** A device row with a fingerprint of its own (the report finds the device by it; signatures are not checked here). */
async function insertDevice(db: Db, serial: string): Promise<string> {
  const fingerprint = randomBytes(32).toString('hex');
  await db.execute(sql`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email,
      certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
    VALUES (${serial}, 'Lenovo', 'X1', 'sub', 'u@example.test', ${fingerprint}, 'pem', 'p256',
      now() - interval '1 day', now() + interval '300 days')`);
  return fingerprint;
}

const verified = (fingerprint: string): VerifiedDeviceRequest => ({
  fingerprint,
  keyType: 'p256',
  certificatePem: 'pem',
  notBefore: new Date(Date.now() - 86_400_000),
  notAfter: new Date(Date.now() + 86_400_000),
  signatureHash: randomBytes(32).toString('hex'),
  replayUntil: new Date(Date.now() + 600_000),
});

/** Records in the model that device `i` reported `inv` at `receivedAt`. */
function record(model: Model, i: number, inv: ReturnType<typeof randomInventory>, receivedAt: string) {
  const at = Date.parse(receivedAt);
  model.agents.set(i, inv.agents);
  model.mcps.set(i, inv.entries);
  for (const k of new Set([...inv.agents.map(agentKey), ...inv.entries.flatMap(keysOfEntry)])) {
    const s = model.seen.get(k);
    model.seen.set(k, { first: Math.min(s?.first ?? at, at), last: Math.max(s?.last ?? at, at) });
  }
}

/** Reports `inv` for device `i` through the report statement and records it in the model. */
async function report(
  db: Db,
  model: Model,
  fingerprints: string[],
  i: number,
  inv: ReturnType<typeof randomInventory>,
) {
  const res = await replaceInventory(db, verified(fingerprints[i] as string), inv.body);
  record(model, i, inv, res.receivedAt);
}

async function foldAll(db: Db) {
  for (;;) if (!(await foldFleetStats(db, { maxRows: 10_000, wait: true })).more) return;
}

/** A device's status columns, as stored. */
interface DeviceRow {
  seen: number | null;
  reported: boolean;
  created: number;
}

/**
 * The summary's device counts at `now`, recounted here from the devices' rows (the statuses the device list gives:
 * never reported without inventory or events, else online when seen within the threshold).
 */
function expectedDeviceCounts(rows: DeviceRow[], thresholdMs: number, now: number) {
  const since = now - thresholdMs;
  const reported = rows.filter((d) => d.reported);
  const online = reported.filter((d) => d.seen !== null && d.seen >= since).length;
  return {
    total: rows.length,
    online,
    offline: reported.length - online,
    never_reported: rows.length - reported.length,
    new_24h: rows.filter((d) => d.created >= now - 86_400_000).length,
  };
}

async function deviceRows(db: Db): Promise<DeviceRow[]> {
  const rows = await queryRows(
    db,
    sql`SELECT to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS seen,
        (last_inventory_at IS NOT NULL OR last_event_at IS NOT NULL) AS reported,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created
      FROM devices`,
    { seen: col.nullable(col.text), reported: col.bool, created: col.text },
  );
  return rows.map((r) => ({
    seen: r.seen === null ? null : Date.parse(r.seen),
    reported: r.reported === true || String(r.reported) === 'true',
    created: Date.parse(r.created),
  }));
}

/**
 * The summary's device counts against a recount, with the online threshold's start (and the 24 h of new devices)
 * put exactly on, just after and just before each device's time, and on the minutes' edges around them.
 */
async function assertDeviceCountsMatch(db: Db, label: string) {
  const config = testConfig();
  const threshold = config.device.online_threshold;
  const rows = await deviceRows(db);
  const nows = new Set<number>();
  for (const d of rows) {
    for (const t of [d.seen, d.created]) {
      if (t === null) continue;
      const shift = t === d.created ? 86_400_000 : threshold;
      const minute = Math.floor(t / 60_000) * 60_000;
      for (const at of [t, t + 1, t - 1, minute, minute + 60_000, minute - 1]) nows.add(at + shift);
    }
  }
  for (const now of nows) {
    const summary = (await fleetSummary(db, config, new Date(now))) as { devices: unknown };
    assert.deepEqual(
      summary.devices,
      expectedDeviceCounts(rows, threshold, now),
      `${label}: devices at ${new Date(now).toISOString()}`,
    );
  }
  const empty = await queryRows(
    db,
    sql`SELECT count(*)::int AS n FROM fleet_device_minutes WHERE devices <= 0`,
  );
  assert.equal(Number(empty[0]?.n), 0, `${label}: minutes with no device are removed`);
}

const newModel = (): Model => ({ agents: new Map(), mcps: new Map(), seen: new Map() });

for (const driver of driversUnderTest()) {
  describe(`fleet counters on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    let db: Db;
    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      db = database.db;
      await migrate(db);
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    test('after random reports folded a few rows at a time, the counters equal a recount of what was reported', async () => {
      for (const seed of [1, 2, 3].slice(0, runs(3))) {
        await db.execute(sql`TRUNCATE devices CASCADE`);
        await rebuildFleetStats(db);
        const r = rng(seed);
        const model = newModel();
        const fingerprints: string[] = [];
        for (let i = 0; i < 6; i++) fingerprints.push(await insertDevice(db, `FS-${seed}-${i}`));
        for (let round = 0; round < 6; round++) {
          for (let step = 0; step < 8; step++) {
            await report(db, model, fingerprints, Math.floor(r() * 6), randomInventory(r));
            // Small folds, without waiting, between reports: a device's rows are often split between folds.
            if (r() < 0.5) await foldFleetStats(db, { maxRows: 1 + Math.floor(r() * 4) });
          }
          await assertCountersMatch(db, model, `seed ${seed} round ${round}, read before the fold`, 'read');
          await foldAll(db);
          await assertCountersMatch(db, model, `seed ${seed} round ${round}`);
        }
        // Everything removed from one device: its keys lose it.
        await report(db, model, fingerprints, 0, {
          body: inventoryBody([]),
          agents: [],
          entries: [],
        });
        await foldAll(db);
        await assertCountersMatch(db, model, `seed ${seed} after emptying a device`);
        // A rebuild from the rows gives the same counts.
        await rebuildFleetStats(db);
        await assertCountersMatch(db, model, `seed ${seed} after a rebuild`);
      }
    });

    test('the same MCP under two agent types counts one device; a read counts it before the fold and writes nothing', async () => {
      await db.execute(sql`TRUNCATE devices CASCADE`);
      await rebuildFleetStats(db);
      const model = newModel();
      const fingerprints = [await insertDevice(db, 'FS-TWO')];
      const entries: Entry[] = [
        { agent: 'claude', name: 'github', enabled: true, transport: 'http' },
        { agent: 'cursor', name: 'github', enabled: false, transport: 'http' },
      ];
      const body = inventoryBody([
        {
          agentType: 'claude',
          displayName: 'c',
          mcps: [{ name: 'github', enabled: true, transport: 'http' }],
        },
        {
          agentType: 'cursor',
          displayName: 'c',
          mcps: [{ name: 'github', enabled: false, transport: 'http' }],
        },
      ]);
      await report(db, model, fingerprints, 0, { body, agents: ['claude', 'cursor'], entries });
      const stored = async () =>
        (
          await queryRows(
            db,
            sql`SELECT devices, enabled_devices, disabled_devices, installs, enabled_installs FROM fleet_mcp_stats
              WHERE name = 'github' AND agent_type = '' AND transport = ''`,
            {
              devices: col.number,
              enabled_devices: col.number,
              disabled_devices: col.number,
              installs: col.number,
              enabled_installs: col.number,
            },
          )
        ).map((r) => ({ ...r }));
      const waiting = async () =>
        (
          await queryRows(
            db,
            sql`SELECT ((SELECT count(*) FROM inventory_agents WHERE stats_dirty)
              + (SELECT count(*) FROM inventory_mcps WHERE stats_dirty)
              + (SELECT count(*) FROM devices WHERE stats_dirty))::int AS n`,
            { n: col.number },
          )
        )[0]?.n;
      const one = { devices: 1, enabled_devices: 1, disabled_devices: 1, installs: 2, enabled_installs: 1 };
      // Not folded: the MCPs view counts it all the same, and leaves the counters and the rows to the fold.
      const view = await listMcps(db, testConfig(), listMcpsQuery.parse({}));
      const github = view.mcps.find((m) => (m as { name: string }).name === 'github') as Record<
        string,
        unknown
      >;
      assert.deepEqual(
        [github.devices, github.enabled_devices, github.disabled_devices],
        [one.devices, one.enabled_devices, one.disabled_devices],
      );
      await assertCountersMatch(db, model, 'two agent types, read before the fold', 'read');
      assert.deepEqual(await stored(), []);
      assert.equal(Number(await waiting()), 5);
      // The fold counts four rows and the device, as the read did.
      const { folded } = await foldFleetStats(db);
      assert.equal(folded, 5);
      assert.deepEqual(await stored(), [one]);
      await assertCountersMatch(db, model, 'two agent types');
    });

    test('device counts equal a recount of the devices at every edge of the threshold, folded a few at a time', async () => {
      for (const seed of [4, 5]) {
        await db.execute(sql`TRUNCATE devices CASCADE`);
        await rebuildFleetStats(db);
        const r = rng(seed);
        const base = Date.parse('2026-03-01T12:00:00.000Z');
        const at = (spanMs: number) => new Date(base + Math.floor(r() * spanMs)).toISOString();
        const ids: string[] = [];
        // Device 0: a row restored without last_seen_at that has reported (offline until it is seen).
        await db.execute(sql`INSERT INTO devices (serial_number, brand, model, owner_subject, certificate_fingerprint,
            certificate_pem, key_type, cert_not_before, cert_not_after, last_inventory_at, created_at)
          VALUES (${`FD-${seed}-restored`}, 'Lenovo', 'X1', 'sub', ${randomBytes(16).toString('hex')}, 'pem', 'p256',
            now(), now(), ${at(60_000)}::timestamptz, ${at(60_000)}::timestamptz)`);
        for (let i = 0; i < 10; i++) {
          const [row] = await queryRows(
            db,
            sql`INSERT INTO devices (serial_number, brand, model, owner_subject, certificate_fingerprint,
                certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at, created_at)
              VALUES (${`FD-${seed}-${i}`}, 'Lenovo', 'X1', 'sub', ${randomBytes(16).toString('hex')}, 'pem', 'p256',
                now(), now(), ${at(600_000)}::timestamptz, ${at(180_000)}::timestamptz)
              RETURNING id::text AS id`,
          );
          ids.push(String(row?.id));
        }
        for (let round = 0; round < 4; round++) {
          // What the writers of the status columns do (registration, inventory, events): a new last-seen time
          // within ten minutes, sometimes the first report, and the device marked for the fold.
          for (let step = 0; step < 8; step++) {
            const id = ids[Math.floor(r() * ids.length)] as string;
            const seen = at(600_000);
            const column = sql.raw(r() < 0.5 ? 'last_event_at' : 'last_inventory_at');
            await db.execute(sql`UPDATE devices SET last_seen_at = ${seen}::timestamptz,
                ${column} = CASE WHEN ${r() < 0.6} THEN ${seen}::timestamptz ELSE ${column} END, stats_dirty = true
              WHERE id = ${id}::uuid`);
            if (r() < 0.5) await foldFleetStats(db, { maxRows: 1 + Math.floor(r() * 3) });
          }
          await assertDeviceCountsMatch(db, `seed ${seed} round ${round}`);
        }
        await rebuildFleetStats(db);
        await assertDeviceCountsMatch(db, `seed ${seed} after a rebuild`);
      }
    });

    test('registering, reporting inventory and sending events each move a device between the counts', async () => {
      await db.execute(sql`TRUNCATE devices CASCADE`);
      await rebuildFleetStats(db);
      const config = testConfig();
      const counts = async () =>
        ((await fleetSummary(db, config)) as { devices: Record<string, number> }).devices;
      const fingerprints = [await insertDevice(db, 'FW-0'), await insertDevice(db, 'FW-1')];
      assert.deepEqual(await counts(), { total: 2, online: 0, offline: 0, never_reported: 2, new_24h: 2 });
      await replaceInventory(db, verified(fingerprints[0] as string), inventoryBody([]));
      assert.deepEqual(await counts(), { total: 2, online: 1, offline: 0, never_reported: 1, new_24h: 2 });
      // Both devices seen an hour ago, as counted: device 0 offline, device 1 still never reported.
      await db.execute(sql`UPDATE devices SET last_seen_at = now() - interval '1 hour', stats_dirty = true`);
      assert.deepEqual(await counts(), { total: 2, online: 0, offline: 1, never_reported: 1, new_24h: 2 });
      const event: ObservabilityEventInput = {
        event_time: new Date().toISOString(),
        agent_type: 'claude',
        mcp_name: 'github',
        tool: 'search',
        event_type: 'invocation',
        result: 'allowed',
        tokens_in: 0,
        tokens_out: 0,
        duration_ms: 1,
        skills: [],
        metadata: {},
      };
      for (const fp of fingerprints) await ingestEvents(db, config, verified(fp), [event], '10.0.0.1');
      assert.deepEqual(await counts(), { total: 2, online: 2, offline: 0, never_reported: 0, new_24h: 2 });
    });

    if (driver === 'pglite') return;

    test('a report still open when a fold runs keeps its rows for a later fold; counted once after it commits', async () => {
      await db.execute(sql`TRUNCATE devices CASCADE`);
      await rebuildFleetStats(db);
      const other = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      try {
        const r = rng(7);
        const model = newModel();
        const fingerprints = [await insertDevice(db, 'FS-OPEN-0'), await insertDevice(db, 'FS-OPEN-1')];
        await report(db, model, fingerprints, 0, randomInventory(r));
        await report(db, model, fingerprints, 1, randomInventory(r));
        await foldAll(db);
        await assertCountersMatch(db, model, 'before');
        let inflight = randomInventory(r);
        while (inflight.entries.length === 0) inflight = randomInventory(r);
        const open = await db.transaction(async (tx) => {
          const res = await replaceInventory(tx, verified(fingerprints[0] as string), inflight.body);
          // Device 1 reports meanwhile, on another connection; a fold there counts it and passes device 0's rows.
          await report(other.db, model, fingerprints, 1, randomInventory(r));
          const result = await foldFleetStats(other.db, { maxRows: 10_000, wait: true });
          assert.equal(result.more, false);
          await assertCountersMatch(other.db, model, 'while device 0 reports');
          return res;
        });
        record(model, 0, inflight, open.receivedAt);
        await foldAll(db);
        await assertCountersMatch(db, model, 'after the open report committed');
      } finally {
        await other.close();
      }
    });

    test('reports of many devices at once, with folds beside them, are each counted once', async () => {
      await db.execute(sql`TRUNCATE devices CASCADE`);
      await rebuildFleetStats(db);
      const other = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      try {
        const r = rng(11);
        const model = newModel();
        const fingerprints: string[] = [];
        for (let i = 0; i < 16; i++) fingerprints.push(await insertDevice(db, `FS-MANY-${i}`));
        for (let round = 0; round < 4; round++) {
          let folding = true;
          const folder = (async () => {
            while (folding) await foldFleetStats(other.db, { maxRows: 3 });
          })();
          await Promise.all(
            fingerprints.map((_, i) => report(db, model, fingerprints, i, randomInventory(r))),
          );
          folding = false;
          await folder;
          await foldAll(db);
          await assertCountersMatch(db, model, `round ${round}`);
        }
      } finally {
        await other.close();
      }
    });
  });
}
