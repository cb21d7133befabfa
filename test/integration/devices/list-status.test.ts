// The device list's status filters in every sort order (shared/observability/fleet/fleet.ts listDevices), on every driver, against
// what this file computes in JS from the device rows it wrote: every page of each sort order, alone and with each
// status, walked by cursor, lists exactly the expected devices in order with their statuses. The first serials are
// all online (as in bench:fleet), serials repeat across brands and created / last-seen times repeat (the id breaks
// the ties), and some devices sit exactly on the online threshold. Each walk runs twice: as the planner chooses, and
// with sequential scans and sorts disabled, so that every page is read on its sort order's index, where the status is
// checked on the index entries (shared/core/db/schema.ts, devices_*_sort_idx). Then devices move between statuses (updated
// rows, as reports leave them before a vacuum) and every walk is checked again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rng } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { jsonParam } from '#shared/core/db/sql-values.ts';
import { listDevices } from '#shared/observability/fleet/fleet.ts';
import { DEVICE_SORTS, listDevicesQuery } from '#shared/observability/schemas.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

type Status = 'online' | 'offline' | 'never_reported';
type Sort = (typeof DEVICE_SORTS)[number];

interface Device {
  id: string;
  serial: string;
  brand: string;
  /** Milliseconds, or null. */
  lastSeen: number | null;
  lastInventory: number | null;
  lastEvent: number | null;
  created: number;
}

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const config = testConfig();
const THRESHOLD = config.device.online_threshold;
const SINCE = NOW - THRESHOLD;
const ONLINE_FIRST = 150;
const OTHERS = 250;
const LIMIT = 30;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The status of a device at NOW, written out here apart from the SQL. */
function statusOf(d: Device): Status {
  if (d.lastInventory === null && d.lastEvent === null) return 'never_reported';
  return d.lastSeen !== null && d.lastSeen >= SINCE ? 'online' : 'offline';
}

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** The devices of `status` (all when undefined) in the order of `sort`, ties broken by id. */
function expected(devices: Device[], sort: Sort, status: Status | undefined): Device[] {
  const field = sort.replace('-', '');
  const sign = sort.startsWith('-') ? -1 : 1;
  const key = (d: Device): string | number =>
    field === 'serial' ? d.serial : field === 'created' ? d.created : (d.lastSeen ?? 0);
  return devices
    .filter((d) => status === undefined || statusOf(d) === status)
    .sort((a, b) => sign * (cmp(key(a), key(b)) || cmp(a.id, b.id)));
}

/** Serials of one shape (letters and zero-padded digits), so any collation orders them as JS does. */
const serialOf = (n: number) => `DLS${String(n).padStart(5, '0')}`;

function makeDevices(seed: number): Device[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  // Few distinct times, so that sort keys repeat.
  const created = Array.from({ length: 12 }, (_, i) => NOW - (i + 1) * 86_400_000 - i * 7);
  const onlineSeen = [NOW, NOW - 60_000, NOW - 300_001, SINCE, SINCE + 1];
  const offlineSeen = [SINCE - 1, SINCE - 3_600_000, NOW - 5 * 86_400_000, NOW - 40 * 86_400_000];
  const devices: Device[] = [];
  const add = (n: number, kind: 'online' | 'offline' | 'registered' | 'never_seen' | 'restored') => {
    const seen =
      kind === 'online'
        ? pick(onlineSeen)
        : kind === 'offline'
          ? pick(offlineSeen)
          : kind === 'registered'
            ? pick([...onlineSeen, ...offlineSeen])
            : null;
    const reported = kind === 'online' || kind === 'offline' || kind === 'restored';
    const via = r() < 0.5;
    const at = seen ?? NOW - 2 * 86_400_000;
    devices.push({
      id: randomUUID(),
      serial: serialOf(n),
      // Every tenth serial twice, under two brands.
      brand: 'Lenovo',
      lastSeen: seen,
      lastInventory: reported && via ? at : null,
      lastEvent: reported && !via ? at : reported && r() < 0.3 ? at : null,
      created: pick(created),
    });
    if (n % 10 === 3) {
      const twin = devices[devices.length - 1] as Device;
      devices.push({ ...twin, id: randomUUID(), brand: 'Dell', created: pick(created) });
    }
  };
  for (let n = 0; n < ONLINE_FIRST; n++) add(n, 'online');
  for (let n = ONLINE_FIRST; n < ONLINE_FIRST + OTHERS; n++) {
    const x = r();
    add(
      n,
      x < 0.4
        ? 'online'
        : x < 0.7
          ? 'offline'
          : x < 0.85
            ? 'registered'
            : x < 0.95
              ? 'never_seen'
              : 'restored',
    );
  }
  return devices;
}

async function insertDevices(db: Db, devices: Device[]) {
  const rows = devices.map((d, i) => ({
    id: d.id,
    serial: d.serial,
    brand: d.brand,
    fp: `fp-${d.id}`,
    owner: `sub-${i % 7}`,
    seen: iso(d.lastSeen),
    inv: iso(d.lastInventory),
    ev: iso(d.lastEvent),
    created: iso(d.created),
  }));
  await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject, certificate_fingerprint,
      certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at, last_inventory_at, last_event_at,
      created_at, updated_at)
    SELECT r.id, r.serial, r.brand, 'X1', r.owner, r.fp, 'pem', 'p256', r.created, r.created + interval '400 days',
      r.seen, r.inv, r.ev, r.created, r.created
    FROM jsonb_to_recordset(${jsonParam(rows)}) AS r(id uuid, serial text, brand text, fp text, owner text,
      seen timestamptz, inv timestamptz, ev timestamptz, created timestamptz)`);
}

/** Every page of one sort order and status, walked by cursor: the devices' ids and statuses in order. */
async function walk(db: Db, sort: Sort, status: Status | undefined) {
  const seen: Array<{ id: string; status: string }> = [];
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 100, 'the walk ends');
    const page: { devices: unknown[]; next_cursor: string | null } = await listDevices(
      db,
      config,
      listDevicesQuery.parse({
        sort,
        limit: LIMIT,
        ...(status ? { status } : {}),
        ...(cursor ? { cursor } : {}),
      }),
      new Date(NOW),
    );
    assert.ok(page.devices.length <= LIMIT);
    for (const d of page.devices as Array<{ id: string; status: string }>) {
      seen.push({ id: d.id, status: d.status });
    }
    cursor = page.next_cursor;
    if (!cursor) break;
    assert.equal(page.devices.length, LIMIT, 'a page before the last is full');
  }
  return seen;
}

async function assertWalksMatch(db: Db, devices: Device[], label: string) {
  const byId = new Map(devices.map((d) => [d.id, d]));
  for (const indexed of [false, true]) {
    const run = async (tx: Db) => {
      if (indexed) {
        // Only the sort orders' indexes can give the order: each page is an index walk with the status checked
        // on the index entries.
        await tx.execute(sql`SET LOCAL enable_seqscan = off`);
        await tx.execute(sql`SET LOCAL enable_bitmapscan = off`);
        await tx.execute(sql`SET LOCAL enable_sort = off`);
        // The disabled plans' costs would otherwise pass JIT's thresholds (half a second to compile each page).
        await tx.execute(sql`SET LOCAL jit = off`);
      }
      for (const sort of DEVICE_SORTS) {
        for (const status of [undefined, 'online', 'offline', 'never_reported'] as const) {
          const what = `${label}, sort=${sort} status=${status ?? 'any'}${indexed ? ' (on the index)' : ''}`;
          const want = expected(devices, sort, status);
          const got = await walk(tx, sort, status);
          assert.deepEqual(
            got.map((d) => d.id),
            want.map((d) => d.id),
            what,
          );
          for (const d of got) assert.equal(d.status, statusOf(byId.get(d.id) as Device), what);
        }
      }
    };
    if (indexed) await db.transaction(run);
    else await run(db);
  }
}

for (const driver of driversUnderTest()) {
  describe(`device list statuses in every sort order on ${driver}`, () => {
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

    test('every page of each status and sort order equals a JS computation, before and after devices move', async () => {
      const devices = makeDevices(7);
      const counts = new Map<Status, number>();
      for (const d of devices) counts.set(statusOf(d), (counts.get(statusOf(d)) ?? 0) + 1);
      // Enough of each status for several pages, and the first serials online.
      for (const s of ['online', 'offline', 'never_reported'] as const) {
        assert.ok((counts.get(s) ?? 0) > 2 * LIMIT, `${s}: ${counts.get(s)}`);
      }
      assert.ok(devices.slice(0, ONLINE_FIRST).every((d) => statusOf(d) === 'online'));
      await insertDevices(db, devices);
      await db.execute(sql`ANALYZE devices`);
      await assertWalksMatch(db, devices, 'as inserted');

      // Devices move between statuses as reports and time move them: the first serials go offline, some offline
      // devices come back online, some never-reported ones report.
      const r = rng(8);
      const moved: Device[] = [];
      for (const [i, d] of devices.entries()) {
        const x = r();
        if (i < ONLINE_FIRST && x < 0.5) moved.push({ ...d, lastSeen: SINCE - 1 - i });
        else if (statusOf(d) === 'offline' && x < 0.4) moved.push({ ...d, lastSeen: SINCE + i });
        else if (statusOf(d) === 'never_reported' && x < 0.3) moved.push({ ...d, lastEvent: NOW - i });
      }
      for (const d of moved) devices[devices.findIndex((x) => x.id === d.id)] = d;
      await db.execute(sql`UPDATE devices d SET last_seen_at = r.seen, last_event_at = r.ev, stats_dirty = true
        FROM jsonb_to_recordset(${jsonParam(moved.map((d) => ({ id: d.id, seen: iso(d.lastSeen), ev: iso(d.lastEvent) })))})
          AS r(id uuid, seen timestamptz, ev timestamptz)
        WHERE d.id = r.id`);
      await assertWalksMatch(db, devices, `after ${moved.length} devices moved`);
    });
  });
}
