// npm run bench:observability — the admin observability area at fleet scale (issue 4).
//
// Seeds 2,000 devices and events over 30 days (5M on PostgreSQL, 500k on PGlite), in time order as a live table
// fills, with generate_series in SQL (the event table's secondary indexes are dropped for the load and rebuilt
// after, as a bulk load does); rebuilds the rollups from the events; then measures, in the same run, p50 / p95 of:
// the summary for 24 h, 7 d and 30 d (and 24 h by minute) against the same figures computed by a raw scan of the
// events (warm-up, then several runs); the event browser's first and 50th page by cursor for several filter pairs
// (common, rare, unindexed, serial, free text, skill); the device list with a status filter; and ingest through the
// ingest path (one device, then several devices in parallel). Prints PASS / FAIL per target.
//
// Targets: summary p95 <= 50 ms at 30 d (also reported at 24 h and 7 d), event pages p95 <= 20 ms at any depth, the
// summary >= 50x faster than the raw scan.
//
// Environment: TEST_DATABASE_URL (PostgreSQL server, else one from npm started for the run; a fresh database is created and dropped), BENCH_DRIVERS
// (pglite,postgres), BENCH_SCALE (0.1 = a tenth of the events, for a quick run), BENCH_EVENTS / BENCH_PG_EVENTS
// (event counts), BENCH_RUNS (30), BENCH_RAW_RUNS (3), BENCH_KEEP=1 (keep the PostgreSQL database).
// The domain functions are called directly: figures are database + JSON time, without HTTP.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rng, simulatedEvents, simulatedInventory } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/db/connect.ts';
import type { Db } from '#shared/db/database.ts';
import { migrate } from '#shared/db/migrate.ts';
import { queryRows } from '#shared/db/query.ts';
import { ingestEvents } from '#shared/domain/events.ts';
import { listDevices } from '#shared/domain/fleet.ts';
import { listEvents } from '#shared/domain/observability-events.ts';
import { foldBacklog, rebuildRollups } from '#shared/domain/observability-rollups.ts';
import { observabilitySummary } from '#shared/domain/observability-summary.ts';
import { observabilityEvent } from '#shared/schemas/devices.ts';
import {
  type ListEventsQuery,
  listDevicesQuery,
  listEventsQuery,
  summaryQuery,
} from '#shared/schemas/observability.ts';
import { createPostgresDatabase, useBenchDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

const DEVICES = 2000;
const DAY = 86_400_000;
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const RAW_RUNS = Number(process.env.BENCH_RAW_RUNS ?? 3);
const now = new Date();

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

/** The event table's secondary indexes, dropped for the bulk load and rebuilt from their own definitions after. */
async function withoutEventIndexes(db: Db, load: () => Promise<void>): Promise<number> {
  const defs = await queryRows<{ name: string; def: string }>(
    db,
    sql`SELECT indexname AS name, indexdef AS def FROM pg_indexes
      WHERE tablename = 'observability_events' AND indexname <> 'observability_events_pkey'`,
  );
  for (const d of defs) await db.execute(sql.raw(`DROP INDEX ${d.name}`));
  await load();
  const t0 = performance.now();
  // The table is partitioned: pg_indexes gives the parent's definition ON ONLY it; without ONLY it builds every
  // partition's index too.
  for (const d of defs) await db.execute(sql.raw(d.def.replace(' ON ONLY ', ' ON ')));
  return performance.now() - t0;
}

const TOOLS = `(VALUES
  ('filesystem', 'read_file', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'write_file', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'list_directory', 'path_outside_workspace', 'fs.workspace-only'),
  ('filesystem', 'search_files', 'path_outside_workspace', 'fs.workspace-only'),
  ('github', 'create_issue', 'merge_requires_review', 'github.protected-branches'),
  ('github', 'get_pull_request', 'merge_requires_review', 'github.protected-branches'),
  ('github', 'search_code', 'secret_in_payload', 'dlp.secrets'),
  ('github', 'merge_pull_request', 'merge_requires_review', 'github.protected-branches'),
  ('postgres', 'query', 'destructive_sql', 'db.read-only'),
  ('postgres', 'list_tables', 'destructive_sql', 'db.read-only'),
  ('postgres', 'describe_table', 'destructive_sql', 'db.read-only'),
  ('slack', 'post_message', 'secret_in_payload', 'dlp.secrets'),
  ('slack', 'search_messages', 'secret_in_payload', 'dlp.secrets'),
  ('slack', 'list_channels', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'navigate', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'screenshot', 'secret_in_payload', 'dlp.secrets'),
  ('browser', 'click', 'secret_in_payload', 'dlp.secrets'),
  ('jira', 'create_ticket', 'secret_in_payload', 'dlp.secrets'),
  ('jira', 'search_issues', 'secret_in_payload', 'dlp.secrets')) AS v(mcp, tool, deny, rule)`;

async function seed(db: Db, events: number) {
  await db.execute(
    sql`CREATE TABLE bench_devices (n int PRIMARY KEY, id uuid NOT NULL, serial text NOT NULL)`,
  );
  await db.execute(
    sql.raw(`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email,
      certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at,
      last_inventory_at, last_event_at, created_at, updated_at)
    SELECT 'BENCH-' || lpad(n::text, 5, '0'), 'Lenovo', 'ThinkPad X1', 'sub-' || n, 'user' || n || '@example.test',
      md5(n::text) || md5('x' || n), 'pem', 'p256', now() - interval '300 days', now() + interval '65 days',
      now() - (n % 200) * interval '3 minutes', now() - interval '1 day', now() - (n % 200) * interval '3 minutes',
      now() - (n % 60) * interval '1 day', now() - (n % 30) * interval '1 hour'
    FROM generate_series(0, ${DEVICES - 1}) AS n`),
  );
  await db.execute(sql`INSERT INTO bench_devices SELECT row_number() OVER (ORDER BY serial_number) - 1, id,
    serial_number FROM devices WHERE serial_number LIKE 'BENCH-%'`);
  await db.execute(
    sql.raw(`INSERT INTO inventory_agents (device_id, agent_type, display_name)
    SELECT b.id, a.t, a.t FROM bench_devices b CROSS JOIN (VALUES ('claude-code'), ('cursor'), ('copilot'), ('windsurf')) AS a(t)
    WHERE (b.n + length(a.t)) % 3 <> 0`),
  );
  await db.execute(
    sql.raw(`INSERT INTO inventory_mcps (device_id, agent_type, name, enabled, transport)
    SELECT a.device_id, a.agent_type, m.name, (hashtext(a.device_id::text || m.name) % 5) <> 0, m.tr
    FROM inventory_agents a CROSS JOIN (VALUES ('filesystem', 'stdio'), ('github', 'http'), ('postgres', 'stdio'),
      ('slack', 'sse'), ('jira', 'http'), ('notion', 'http')) AS m(name, tr)
    WHERE abs(hashtext(a.device_id::text || m.name)) % 3 = 0`),
  );
  // Events in time order (as a live table fills): event i at start + (i + jitter) * span / n, on device i % 2000.
  const start = now.getTime() - 30 * DAY;
  const step = (30 * DAY) / events;
  const chunk = 250_000;
  const t0 = performance.now();
  // The days' partitions first (the migration made today's week only), as the schedule would have over 30 days.
  await db.execute(
    sql`SELECT observability_events_maintain(${new Date(start).toISOString().slice(0, 10)}::date, 38, 0)`,
  );
  const indexMs = await withoutEventIndexes(db, async () => {
    for (let lo = 0; lo < events; lo += chunk) {
      const hi = Math.min(events, lo + chunk) - 1;
      await db.execute(
        sql.raw(`INSERT INTO observability_events (device_id, serial_number, source_ip, received_at, event_time,
        agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
        session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt)
      SELECT d.id, d.serial, '10.0.0.1', s.t + interval '2 seconds', s.t, ag.t, c.mcp, c.tool,
        CASE WHEN s.r2 < 0.03 THEN 'error' WHEN s.r3 < 0.5 THEN 'invocation' ELSE 'result' END,
        CASE WHEN s.r2 < 0.03 THEN 'error' WHEN s.r2 < 0.10 THEN 'denied' ELSE 'allowed' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.deny END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN 'denied by ' || c.rule || ' for ' || c.tool END,
        CASE WHEN s.r2 < 0.01 THEN 'ECONNRESET talking to the MCP server' WHEN s.r2 < 0.02
          THEN 'tool timed out after 30s' WHEN s.r2 < 0.03 THEN 'rate limited by upstream (429)' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.rule END, ag.model,
        'sess-' || s.dn || '-' || (extract(epoch FROM s.t)::bigint / 3600),
        (ARRAY['platform', 'data', 'security', 'frontend'])[1 + s.dn % 4],
        'user' || s.dn || '@example.test', (s.r3 * 4000)::int, (s.r3 * 600)::int, (exp(s.r1 * 9))::int,
        CASE WHEN s.r4 < 0.1 THEN jsonb_build_array((ARRAY['code-review', 'sql', 'search', 'refactor', 'deploy'])[1 + (s.r4 * 50)::int % 5])
          ELSE '[]'::jsonb END,
        'Find where the billing retry logic lives'
      FROM (SELECT i, i % ${DEVICES} AS dn,
              to_timestamp((${start} + (i + random()) * ${step}) / 1000.0) AS t, random() AS r1, random() AS r2,
              random() AS r3, random() AS r4, (random() * 19)::int % 19 AS k, (i / ${DEVICES}) % 4 AS a
            FROM generate_series(${lo}, ${hi}) AS i) s
      JOIN bench_devices d ON d.n = s.dn
      JOIN (VALUES (0, 'claude-code', 'claude-sonnet-4-5'), (1, 'cursor', 'gpt-5'), (2, 'copilot', 'gpt-4.1'),
                   (3, 'windsurf', 'claude-opus-4')) AS ag(k, t, model) ON ag.k = s.a
      JOIN (SELECT row_number() OVER () - 1 AS k, * FROM ${TOOLS}) c ON c.k = s.k
      ORDER BY s.i`),
      );
      process.stdout.write(`  loaded ${(hi + 1).toLocaleString('en')} events\r`);
    }
    process.stdout.write('\n');
    console.log(`load: ${seconds(t0)}`);
  });
  console.log(`event indexes rebuilt: ${(indexMs / 1000).toFixed(1)} s`);
}

interface Target {
  what: string;
  value: string;
  target: string;
  pass: boolean | null;
}

async function run(driver: 'pglite' | 'postgres', events: number): Promise<Target[]> {
  const pg = driver === 'postgres' ? await createPostgresDatabase() : undefined;
  const config = testConfig({
    db: { dsn: pg ? pg.url : 'pglite:memory', statement_timeout: '900s', max_open_conns: 8 },
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
    console.log(
      `\nbench:observability on ${driver}: ${events.toLocaleString('en')} events, ${DEVICES} devices, 30 days`,
    );
    const t0 = performance.now();
    await seed(db, events);
    let t1 = performance.now();
    await rebuildRollups(db);
    console.log(`rollups rebuilt from the events: ${seconds(t1)}`);
    t1 = performance.now();
    // The steady state of a live table: autovacuum has run (visibility map set, statistics current).
    await db.execute(sql`VACUUM ANALYZE`);
    console.log(`vacuum analyze: ${seconds(t1)}; seeding in all: ${seconds(t0)}`);
    const [rows] = await queryRows<{
      h: number;
      q: number;
      d: number;
      w: number;
      a: number;
      s: number;
      size: string;
    }>(
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
    }
    const from30 = new Date(now.getTime() - 30 * DAY).toISOString();
    const [dev] = await queryRows<{ id: string }>(
      db,
      sql`SELECT id::text AS id FROM bench_devices WHERE n = 42`,
    );
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
    const devices = await queryRows<{ fingerprint: string }>(
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
      return ingestEvents(
        db,
        config,
        {
          fingerprint: d.fingerprint,
          keyType: 'p256',
          certificatePem: 'pem',
          notBefore: now,
          notAfter: now,
          signatureHash: randomUUID(),
          replayUntil: new Date(Date.now() + 600_000),
        },
        batch,
        '10.0.0.1',
      );
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
    const tf = performance.now();
    const { folded } = await foldBacklog(db, Number.POSITIVE_INFINITY);
    console.log(
      `  the fold of those ${folded.toLocaleString('en')} events into the rollups: ${ms(performance.now() - tf)} ms`,
    );
    if (driver === 'postgres') {
      // Statistics are flushed asynchronously: an idle backend (the one that folded) within 10 s (PGSTAT_IDLE_INTERVAL).
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      const stats = await queryRows<{ table: string; upd: number; hot: number }>(
        db,
        sql`SELECT relname AS table, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
          WHERE relname IN ('observability_rollups', 'observability_series') ORDER BY 1`,
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
    if (process.env.BENCH_KEEP && pg) console.log(`kept database ${pg.name}`);
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
