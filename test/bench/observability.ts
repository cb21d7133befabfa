// npm run bench:observability — the admin observability area at fleet scale.
//
// Seeds 2,000 devices and events over 30 days (5M on PostgreSQL, 500k on PGlite), in time order as a live table
// fills, with generate_series in SQL (the event table's secondary indexes are dropped for the load and rebuilt
// after, as a bulk load does); rebuilds the rollups from the events; then measures, in the same run, p50 / p95 of:
// the summary for 24 h, 7 d and 30 d (and 24 h by minute) against the same figures computed by a raw scan of the
// events (warm-up, then several runs); the event browser's first and 50th page by cursor for several filter pairs
// (common, rare, unindexed, serial, free text, skill); the device list with a status filter; ingest through the
// ingest path (one device, then several devices in parallel); and the summary with those batches not folded yet
// (the tail each read adds, bounded); and, for each range's summary, the worst relative error of its p50 / p95 / p99
// (overall, per top tool, per bucket) against percentile_cont over the raw events (test/support/exact-percentiles.ts).
// Prints PASS / FAIL per target.
//
// Targets: summary p95 <= 50 ms at 30 d (also reported at 24 h and 7 d), event pages p95 <= 20 ms at any depth, the
// summary >= 50x faster than the raw scan, percentiles within 2 % of percentile_cont.
//
// Environment: TEST_DATABASE_URL (PostgreSQL server, else one from npm started for the run; a fresh database is created and dropped), BENCH_DRIVERS
// (pglite,postgres), BENCH_SCALE (0.1 = a tenth of the events, for a quick run), BENCH_EVENTS / BENCH_PG_EVENTS
// (event counts), BENCH_RUNS (30), BENCH_RAW_RUNS (3), BENCH_KEEP=1 (keep the PostgreSQL database), BENCH_REUSE=<name>
// (measure again on a database an earlier run kept, on the same server, without seeding it: its newest event stands
// for the seeding's now; the ingest step adds its events to it; it is kept).
// The domain functions are called directly: figures are database + JSON time, without HTTP.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rng, simulatedEvents, simulatedInventory } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { ingestEvents } from '#shared/devices/events.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { listEvents } from '#shared/observability/events/events.ts';
import { listDevices } from '#shared/observability/fleet/fleet.ts';
import {
  foldBacklog,
  READ_TAIL_MAX_EVENTS,
  rebuildRollups,
  unfoldedSql,
} from '#shared/observability/rollups/rollups.ts';
import {
  type ListEventsQuery,
  listDevicesQuery,
  listEventsQuery,
  summaryQuery,
} from '#shared/observability/schemas.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';
import { createPostgresDatabase, keptDatabase, useBenchDatabase } from '#test/support/databases.ts';
import { percentileErrors } from '#test/support/exact-percentiles.ts';
import { testConfig } from '#test/support/service.ts';
import { verifiedDevice } from '#test/support/verified-device.ts';
import { DEVICES, seedObservability } from './observability-seed.ts';

const DAY = 86_400_000;
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const RAW_RUNS = Number(process.env.BENCH_RAW_RUNS ?? 3);
const startedAt = new Date();

type Timing = { p50: number; p95: number; n: number };
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
};
async function measure(runs: number, fn: () => Promise<unknown>, warmups = 2): Promise<Timing> {
  for (let i = 0; i < warmups; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95), n: runs };
}
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const fmt = (m: Timing) => `p50 ${ms(m.p50)} ms, p95 ${ms(m.p95)} ms`;
const seconds = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

interface Target {
  what: string;
  value: string;
  target: string;
  pass: boolean | null;
}

async function run(driver: 'pglite' | 'postgres', events: number): Promise<Target[]> {
  const reuse = driver === 'postgres' ? process.env.BENCH_REUSE : undefined;
  const pg =
    driver === 'postgres' ? (reuse ? keptDatabase(reuse) : await createPostgresDatabase()) : undefined;
  const config = testConfig({
    db: { dsn: pg ? pg.url : 'pglite:memory', statement_timeout: '900s', max_open_conns: 8 },
    // Alerts must settle for longer than the statement limit (the configuration's rule).
    alerts: { settle: '901s' },
  });
  const database = await connectDatabase(config);
  const db = database.db;
  const targets: Target[] = [];
  const target = (what: string, value: number, limit: number, unit: 'ms' | 'x') =>
    targets.push({
      what: `${driver}: ${what}`,
      value: unit === 'ms' ? `${ms(value)} ms` : `${value.toFixed(0)}x`,
      target: unit === 'ms' ? `<= ${limit} ms` : `>= ${limit}x`,
      pass: unit === 'ms' ? value <= limit : value >= limit,
    });
  try {
    await migrate(db);
    let now = startedAt;
    if (reuse) {
      const [kept] = await queryRows(
        db,
        sql`SELECT max(event_time)::text AS t, count(*)::text AS n FROM observability_events`,
      );
      now = new Date(String(kept?.t));
      console.log(
        `\nbench:observability on ${driver}: database ${reuse}, kept by an earlier run, ${Number(kept?.n).toLocaleString('en')} events; its newest event (${now.toISOString()}) stands for now`,
      );
    } else {
      console.log(
        `\nbench:observability on ${driver}: ${events.toLocaleString('en')} events, ${DEVICES} devices, 30 days`,
      );
      const t0 = performance.now();
      await seedObservability(db, events, now);
      let t1 = performance.now();
      await rebuildRollups(db);
      console.log(`rollups rebuilt from the events: ${seconds(t1)}`);
      t1 = performance.now();
      // The steady state of a live table: autovacuum has run (visibility map set, statistics current).
      await db.execute(sql`VACUUM ANALYZE`);
      console.log(`vacuum analyze: ${seconds(t1)}; seeding in all: ${seconds(t0)}`);
    }
    const [rows] = await queryRows(
      db,
      sql`SELECT (count(*) FILTER (WHERE kind = 'call' AND grain = 'hour'))::int AS h,
        (count(*) FILTER (WHERE kind = 'call' AND grain = '6h'))::int AS q,
        (count(*) FILTER (WHERE kind = 'call' AND grain = 'day'))::int AS d,
        (count(*) FILTER (WHERE kind = 'call' AND grain = 'week'))::int AS w,
        (count(*) FILTER (WHERE kind = 'actor'))::int AS a,
        (SELECT count(*) FROM observability_series)::int AS s,
        pg_size_pretty((SELECT sum(pg_total_relation_size(inhrelid)) FROM pg_inherits
          WHERE inhparent = 'observability_events'::regclass)::bigint) AS size
        FROM observability_rollups`,
    );
    console.log(
      `rollups: call rows ${rows?.h} hourly, ${rows?.q} 6-hourly, ${rows?.d} daily, ${rows?.w} weekly; ${rows?.a} actor rows; ${rows?.s} series rows; events table + indexes ${rows?.size}`,
    );

    console.log('\nsummary (rollups) vs the same figures from a raw scan of the events:');
    let worst = { worst: 0, where: 'nothing compared', compared: 0 };
    for (const [label, days, extra] of [
      ['24 h', 1, {}],
      ['7 d', 7, {}],
      ['30 d', 30, {}],
      ['24 h by minute', 1, { bucket: 'minute' }],
    ] as const) {
      const q = summaryQuery.parse({ from: new Date(now.getTime() - days * DAY).toISOString(), ...extra });
      const fast = await measure(RUNS, () => observabilitySummary(db, q, { now }));
      const source = (await observabilitySummary(db, q, { now })).source;
      const raw = await measure(RAW_RUNS, () => observabilitySummary(db, q, { now, source: 'raw' }), 1);
      const ratio = raw.p50 / fast.p50;
      console.log(
        `  ${label.padEnd(15)} rollups ${fmt(fast)} | raw ${fmt(raw)} (${RAW_RUNS} runs) | ${ratio.toFixed(0)}x  [source ${JSON.stringify(source)}]`,
      );
      target(`summary ${label} p95`, fast.p95, 50, 'ms');
      target(`summary ${label} vs raw scan (p50)`, ratio, 50, 'x');
      // The percentiles against percentile_cont over the raw events: totals, top tools, every bucket.
      const summary = await observabilitySummary(db, summaryQuery.parse({ ...q, top: 50 }), { now });
      const error = await percentileErrors(db, summary);
      if (error.worst >= worst.worst) worst = error;
      console.log(
        `    percentiles: worst relative error ${(100 * error.worst).toFixed(2)}% of ${error.compared} (${error.where})`,
      );
    }
    const [stored] = await queryRows(db, sql`SELECT count(*)::text AS n FROM observability_events`);
    console.log(
      `  worst percentile error at ${Number(stored?.n).toLocaleString('en')} events: ${(100 * worst.worst).toFixed(2)}% (${worst.where})`,
    );
    targets.push({
      what: `${driver}: summary percentiles, worst relative error vs percentile_cont`,
      value: `${(100 * worst.worst).toFixed(2)}%`,
      target: '<= 2%',
      pass: worst.worst <= 0.02,
    });
    const from30 = new Date(now.getTime() - 30 * DAY).toISOString();
    const [dev] = await queryRows(db, sql`SELECT id::text AS id FROM bench_devices WHERE n = 42`);
    for (const [label, filters] of [
      ['agent + result', { agent_type: 'cursor', result: 'denied' }],
      ['mcp + tool', { mcp: 'github', tool: 'search_code' }],
      ['device', { device_id: dev?.id }],
    ] as const) {
      const q = summaryQuery.parse({ from: from30, ...filters });
      const source = (await observabilitySummary(db, q, { now })).source;
      console.log(
        `  30 d, ${label} filter: ${fmt(await measure(Math.min(RUNS, 10), () => observabilitySummary(db, q, { now })))}  [source ${JSON.stringify(source)}]`,
      );
    }

    console.log('\nevent browser, 50 per page, first page and 50th page by cursor:');
    const pairs: [string, Partial<ListEventsQuery>][] = [
      ['common', { mcp: 'github', result: 'denied' }],
      ['common', { agent_type: 'cursor', tool: 'search_code' }],
      ['rare', { deny_code: 'destructive_sql', model: 'gpt-5' }],
      ['unindexed', { group: 'security', model: 'gpt-5' }],
      ['serial', { serial: 'BENCH-00042', event_type: 'invocation' }],
      ['free text', { q: 'timed out', agent_type: 'windsurf' }],
      ['skill', { skill: 'sql', result: 'allowed' }],
    ];
    for (const [kind, filters] of pairs) {
      const first = listEventsQuery.parse({ ...filters, limit: 50 });
      const firstPage = await measure(RUNS, () => listEvents(db, config, first));
      let cursor: string | undefined;
      let page = 1;
      for (; page < 50; page++) {
        const res = await listEvents(db, config, listEventsQuery.parse({ ...filters, limit: 50, cursor }));
        if (!res.next_cursor) break;
        cursor = res.next_cursor;
      }
      const deep = listEventsQuery.parse({ ...filters, limit: 50, cursor });
      const deepPage = await measure(RUNS, () => listEvents(db, config, deep));
      const label = `${kind} ${JSON.stringify(filters)}`;
      console.log(`  ${label}: first ${fmt(firstPage)} | page ${page} ${fmt(deepPage)}`);
      target(`events ${label}, first page p95`, firstPage.p95, 20, 'ms');
      target(`events ${label}, page ${page} p95`, deepPage.p95, 20, 'ms');
    }

    for (const status of ['online', 'offline'] as const) {
      const q = listDevicesQuery.parse({ status, limit: 100 });
      const m = await measure(RUNS, () => listDevices(db, config, q));
      console.log(`device list, status=${status}, 100 per page: ${fmt(m)}`);
      target(`device list status=${status} p95`, m.p95, 20, 'ms');
    }

    console.log(
      '\ningest through ingestEvents (one statement per batch: events, device; rollups folded after):',
    );
    const devices = await queryRows(
      db,
      sql`SELECT d.certificate_fingerprint AS fingerprint FROM bench_devices b JOIN devices d ON d.id = b.id
        ORDER BY b.n LIMIT 16`,
    );
    const r = rng(7);
    const inventory = simulatedInventory(r);
    const batchOf = (size: number, i: number) =>
      simulatedEvents(r, inventory, size, {
        actorEmail: `user${i}@example.test`,
        from: new Date(Date.now() - 300_000),
        to: new Date(),
      }).map((e) => observabilityEvent.parse({ ...e, event_id: randomUUID() }));
    const ingest = (deviceIndex: number, batch: ReturnType<typeof batchOf>) => {
      const d = devices[deviceIndex % devices.length] as { fingerprint: string };
      return ingestEvents(db, config, verifiedDevice(d.fingerprint), batch, '10.0.0.1');
    };
    for (const size of [100, 1000]) {
      const batches = Array.from({ length: 12 }, (_, i) => batchOf(size, i));
      let i = 0;
      const m = await measure(10, () => ingest(0, batches[i++] ?? []));
      console.log(`  one device, batches of ${size}: ${fmt(m)} per batch`);
    }
    const workers = driver === 'postgres' ? 4 : 1;
    const perWorker = 20;
    const size = 200;
    const prepared = Array.from({ length: workers }, (_, w) =>
      Array.from({ length: perWorker }, () => batchOf(size, w)),
    );
    const latencies: number[] = [];
    const tc = performance.now();
    await Promise.all(
      prepared.map(async (batches, w) => {
        for (const batch of batches) {
          const ts = performance.now();
          await ingest(w, batch);
          latencies.push(performance.now() - ts);
        }
      }),
    );
    const wall = (performance.now() - tc) / 1000;
    const total = workers * perWorker * size;
    console.log(
      `  ${workers === 1 ? 'one device' : `${workers} devices in parallel`}, ${perWorker} batches of ${size} each: ${Math.round(total / wall).toLocaleString('en')} events/s; per batch p50 ${ms(quantile(latencies, 0.5))} ms, p95 ${ms(quantile(latencies, 0.95))} ms`,
    );
    // Reads add the events the fold has not reached (at most READ_TAIL_MAX_EVENTS of them): the summary with the
    // batches above still unfolded, over a range that holds them.
    const [tail] = await queryRows(
      db,
      sql`SELECT count(*)::int AS n FROM observability_events e WHERE ${unfoldedSql('e')}`,
      { n: col.number },
    );
    for (const [label, days] of [
      ['24 h', 1],
      ['30 d', 30],
    ] as const) {
      const at = new Date();
      const q = summaryQuery.parse({ from: new Date(at.getTime() - days * DAY).toISOString() });
      const m = await measure(RUNS, () => observabilitySummary(db, q, { now: at }));
      console.log(
        `  summary ${label} with ${tail?.n.toLocaleString('en')} events not folded (a read adds at most ${READ_TAIL_MAX_EVENTS.toLocaleString('en')}): ${fmt(m)}`,
      );
      target(`summary ${label} with a full tail p95`, m.p95, 50, 'ms');
    }
    const tf = performance.now();
    const { folded } = await foldBacklog(db, Number.POSITIVE_INFINITY);
    console.log(
      `  the fold of those ${folded.toLocaleString('en')} events into the rollups: ${ms(performance.now() - tf)} ms`,
    );
    if (driver === 'postgres') {
      // Statistics are flushed asynchronously: an idle backend (the one that folded) within 10 s (PGSTAT_IDLE_INTERVAL).
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      const stats = await queryRows(
        db,
        sql`SELECT relname AS table, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
          WHERE relname IN ('observability_rollups', 'observability_series') ORDER BY 1`,
        { table: col.text, upd: col.number, hot: col.number },
      );
      for (const s of stats) {
        console.log(
          `  ${s.table}: ${s.upd} updates by the upserts, ${Math.round((100 * s.hot) / Math.max(1, s.upd))}% HOT`,
        );
      }
    }
    return targets;
  } finally {
    await database.close();
    if ((process.env.BENCH_KEEP || reuse) && pg) console.log(`kept database ${pg.name}`);
    else await pg?.drop();
  }
}

await useBenchDatabase();
const drivers = (process.env.BENCH_DRIVERS ?? 'pglite,postgres').split(',');
const all: Target[] = [];
for (const driver of drivers) {
  if (driver === 'pglite')
    all.push(...(await run('pglite', Number(process.env.BENCH_EVENTS ?? Math.round(500_000 * SCALE)))));
  if (driver === 'postgres') {
    all.push(
      ...(await run('postgres', Number(process.env.BENCH_PG_EVENTS ?? Math.round(5_000_000 * SCALE)))),
    );
  }
}
console.log('\ntargets:');
const width = Math.max(...all.map((t) => t.what.length));
for (const t of all) {
  console.log(
    `  ${t.pass ? 'PASS' : 'FAIL'}  ${t.what.padEnd(width)}  ${t.value.padStart(8)}  (${t.target})`,
  );
}
console.log(`${all.filter((t) => t.pass).length} passed, ${all.filter((t) => !t.pass).length} failed`);
