// npm run bench:observability — seeds a fleet (2,000 devices, events over 30 days: 5M on PostgreSQL, 500k on
// PGlite; BENCH_EVENTS / BENCH_PG_EVENTS override), builds the rollups, then measures p50 / p95 of the summary
// (24 h, 7 d, 30 d) on the rollups and on a raw scan of the events, the event browser's first and 50th page with
// two filters, and the device list with a status filter. PostgreSQL runs when TEST_DATABASE_URL is set
// (BENCH_DRIVERS=pglite,postgres narrows). The domain functions are called directly: figures are database +
// JSON time, without HTTP.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { connectDatabase } from '#shared/db/connect.ts';
import type { Db } from '#shared/db/database.ts';
import { migrate } from '#shared/db/migrate.ts';
import { queryRows } from '#shared/db/query.ts';
import { ingestEvents } from '#shared/domain/events.ts';
import { listDevices } from '#shared/domain/fleet.ts';
import { listEvents, observabilitySummary } from '#shared/domain/observability.ts';
import { rebuildRollups } from '#shared/domain/observability-rollups.ts';
import type { ObservabilityEventInput } from '#shared/schemas/devices.ts';
import { listDevicesQuery, listEventsQuery, summaryQuery } from '#shared/schemas/observability.ts';
import { createPostgresDatabase, testDatabaseUrl } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

const DEVICES = 2000;
const DAY = 86_400_000;
const now = new Date();

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
};
async function measure(runs: number, fn: () => Promise<unknown>, warmup = true) {
  if (warmup) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}
const fmt = (m: { p50: number; p95: number }) => `p50 ${m.p50.toFixed(1)} ms, p95 ${m.p95.toFixed(1)} ms`;

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
    FROM generate_series(1, ${DEVICES}) AS n`),
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
  const chunk = 250_000;
  for (let lo = 0; lo < events; lo += chunk) {
    const hi = Math.min(events, lo + chunk) - 1;
    await db.execute(
      sql.raw(`INSERT INTO observability_events (device_id, serial_number, source_ip, received_at, event_time,
        agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
        session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt)
      SELECT d.id, d.serial, '10.0.0.1', s.t, s.t, ag.t, c.mcp, c.tool,
        CASE WHEN s.r2 < 0.03 THEN 'error' ELSE 'invocation' END,
        CASE WHEN s.r2 < 0.03 THEN 'error' WHEN s.r2 < 0.10 THEN 'denied' ELSE 'allowed' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.deny END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN 'denied by ' || c.rule END,
        CASE WHEN s.r2 < 0.03 THEN 'ECONNRESET talking to the MCP server' END,
        CASE WHEN s.r2 >= 0.03 AND s.r2 < 0.10 THEN c.rule END, ag.model,
        'sess-' || s.dn || '-' || (extract(epoch FROM s.t)::bigint / 3600), (ARRAY['platform', 'data', 'security', 'frontend'])[1 + s.dn % 4],
        'user' || (s.dn + 1) || '@example.test', (s.r3 * 4000)::int, (s.r3 * 600)::int,
        (exp(s.r1 * 9))::int, '[]'::jsonb, 'Find where the billing retry logic lives'
      FROM (SELECT i, i % ${DEVICES} AS dn, now() - random() * interval '30 days' AS t, random() AS r1, random() AS r2,
              random() AS r3, (random() * 19)::int % 19 AS k, (i / ${DEVICES}) % 4 AS a
            FROM generate_series(${lo}, ${hi}) AS i) s
      JOIN bench_devices d ON d.n = s.dn
      JOIN (VALUES (0, 'claude-code', 'claude-sonnet-4-5'), (1, 'cursor', 'gpt-5'), (2, 'copilot', 'gpt-4.1'),
                   (3, 'windsurf', 'claude-opus-4')) AS ag(k, t, model) ON ag.k = s.a
      JOIN (SELECT row_number() OVER () - 1 AS k, * FROM (VALUES
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
        ('jira', 'search_issues', 'secret_in_payload', 'dlp.secrets')) AS v(mcp, tool, deny, rule)) c ON c.k = s.k`),
    );
    process.stdout.write(`  seeded ${hi + 1} events\r`);
  }
  process.stdout.write('\n');
}

async function run(driver: 'pglite' | 'postgres', events: number) {
  const pg = driver === 'postgres' ? await createPostgresDatabase() : undefined;
  const config = testConfig({ db: { dsn: pg ? pg.url : 'pglite:memory', statement_timeout: '600s' } });
  const database = await connectDatabase(config);
  const db = database.db;
  try {
    await migrate(db);
    console.log(
      `\nbench:observability on ${driver}: ${events.toLocaleString('en')} events, ${DEVICES} devices, 30 days`,
    );
    let t0 = performance.now();
    await seed(db, events);
    console.log(`seed: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
    await rebuildRollups(db);
    // The steady state of a live table: autovacuum has run (visibility map set, statistics current).
    await db.execute(sql`VACUUM ANALYZE`);
    const [rows] = await queryRows<{ n: number; h: number; d: number; w: number }>(
      db,
      sql`SELECT count(*)::int AS n, (count(*) FILTER (WHERE grain = 'hour'))::int AS h,
        (count(*) FILTER (WHERE grain = 'day'))::int AS d, (count(*) FILTER (WHERE grain = 'week'))::int AS w
        FROM observability_rollups`,
    );
    console.log(
      `rollups: ${rows?.n} rows (${rows?.h} hourly, ${rows?.d} daily, ${rows?.w} weekly), built in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const runs = Number(process.env.BENCH_RUNS ?? 30);
    const rawRuns = Number(process.env.BENCH_RAW_RUNS ?? 1);
    const results: string[] = [];
    for (const days of [1, 7, 30]) {
      const q = summaryQuery.parse({ from: new Date(now.getTime() - days * DAY).toISOString() });
      const fast = await measure(runs, () => observabilitySummary(db, q, { now }));
      const raw = await measure(rawRuns, () => observabilitySummary(db, q, { now, source: 'raw' }), false);
      results.push(
        `summary ${String(days).padStart(2)} d: rollups ${fmt(fast)} | raw scan ${fmt(raw)} | ${(raw.p50 / fast.p50).toFixed(0)}x`,
      );
      console.log(results[results.length - 1]);
    }
    const filtered = { from: new Date(now.getTime() - 30 * DAY).toISOString(), bucket: 'day' };
    const f2 = summaryQuery.parse({ ...filtered, agent_type: 'cursor', result: 'denied' });
    console.log(
      `summary 30 d, agent + result filters: rollups ${fmt(await measure(runs, () => observabilitySummary(db, f2, { now })))}`,
    );
    for (const filters of [
      { mcp: 'github', result: 'denied' },
      { agent_type: 'cursor', tool: 'search_code' },
    ]) {
      const first = listEventsQuery.parse({ ...filters, limit: 50 });
      const firstPage = await measure(runs, () => listEvents(db, first));
      let cursor: string | undefined;
      for (let page = 1; page < 50; page++) {
        const res = await listEvents(db, listEventsQuery.parse({ ...filters, limit: 50, cursor }));
        cursor = res.next_cursor ?? undefined;
      }
      const fiftieth = listEventsQuery.parse({ ...filters, limit: 50, cursor });
      const deep = await measure(runs, () => listEvents(db, fiftieth));
      console.log(
        `events ${JSON.stringify(filters)}, 50 per page: first page ${fmt(firstPage)} | 50th page ${fmt(deep)}`,
      );
    }
    // Ingest with the rollup CTE: batches of 100 and 1,000 events for one device, into the seeded tables.
    const [dev] = await queryRows<{ id: string; serial: string }>(
      db,
      sql`SELECT id::text AS id, serial FROM bench_devices WHERE n = 0`,
    );
    const device = {
      fingerprint: 'bench',
      keyType: 'p256' as const,
      certificatePem: 'pem',
      notBefore: now,
      notAfter: now,
      signatureHash: '',
      replayUntil: new Date(now.getTime() + 600_000),
      deviceId: dev?.id ?? '',
      serialNumber: dev?.serial ?? '',
    };
    const tools = ['read_file', 'search_code', 'query', 'post_message'];
    for (const size of [100, 1000]) {
      const timing = await measure(10, () => {
        const events: ObservabilityEventInput[] = Array.from({ length: size }, (_, i) => ({
          event_time: new Date(now.getTime() - (i % 60) * 60_000).toISOString(),
          agent_type: i % 2 ? 'claude-code' : 'cursor',
          mcp_name: 'bench',
          tool: tools[i % 4] as string,
          event_type: 'invocation',
          result: i % 10 === 0 ? 'denied' : 'allowed',
          deny_code: i % 10 === 0 ? 'x' : undefined,
          deny_reason: i % 10 === 0 ? 'x' : undefined,
          rule_applied: i % 10 === 0 ? 'r' : undefined,
          actor_email: 'user1@example.test',
          tokens_in: i,
          tokens_out: i,
          duration_ms: i * 7,
          skills: [],
          metadata: {},
        }));
        return ingestEvents(db, config, { ...device, signatureHash: randomUUID() }, events, '10.0.0.1');
      });
      console.log(`ingest a batch of ${size} events (with the rollup CTE): ${fmt(timing)}`);
    }
    const devices = listDevicesQuery.parse({ status: 'online', limit: 100 });
    console.log(
      `device list, status=online, 100 rows: ${fmt(await measure(runs, () => listDevices(db, config, devices)))}`,
    );
  } finally {
    await database.close();
    if (process.env.BENCH_KEEP) console.log(`kept database ${pg?.name}`);
    else await pg?.drop();
  }
}

const drivers = (process.env.BENCH_DRIVERS ?? (testDatabaseUrl() ? 'pglite,postgres' : 'pglite')).split(',');
for (const driver of drivers) {
  if (driver === 'pglite') await run('pglite', Number(process.env.BENCH_EVENTS ?? 500_000));
  if (driver === 'postgres') await run('postgres', Number(process.env.BENCH_PG_EVENTS ?? 5_000_000));
}
