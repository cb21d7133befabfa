// npm run bench:export — the export destinations (shared/exports/) on one core, against a real PostgreSQL:
// BENCH_EXPORT_EVENTS stored events (default 200,000; 5,000,000 for the replay goal, under 5 minutes) are read after
// a cursor as the delivery reads them (the baseline), mapped (OTLP spans and point, OCSF API Activity: goal 50,000
// events/s each), encoded per shape (OTLP protobuf, OTLP JSON, OCSF JSON lines, HEC JSON), and delivered whole (a
// replay from the oldest event) to a local receiver in a thread of its own per destination kind (BENCH_EXPORT_KINDS, a
// comma-separated subset, e.g. `otlp_http protobuf`), each as events/s, total time, ratio to the raw read, and
// events per CPU-second of the sending thread (what one free core would give on a machine busy with more). Then ingest
// (ingestEvents, batches of 100) runs alone and with an OTLP export beside it in windows of
// BENCH_EXPORT_INGEST_SECONDS, alternated BENCH_EXPORT_ROUNDS times (export-beside.ts), and prints the ratio of the
// two rates (goal: within 10%); BENCH_EXPORT_ROUNDS=0 skips it.
import { availableParallelism, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { AuditActor } from '#shared/audit/audit.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { readBatch, SETTLED } from '#shared/exports/delivery/read.ts';
import { metricsBody, tracesBody } from '#shared/exports/destinations/otlp-encoding.ts';
import { splunkHecSettings } from '#shared/exports/destinations/settings.ts';
import { hecBody } from '#shared/exports/destinations/splunk-hec.ts';
import { toOcsfApiActivity } from '#shared/exports/ocsf.ts';
import { toOtelDurationPoint, toOtelSpans } from '#shared/exports/otel.ts';
import type { CreateDestinationBody } from '#shared/exports/schemas.ts';
import type { ExportSource } from '#shared/exports/source.ts';
import { createDestination, deliverExports } from '#shared/exports/streams.ts';
import { testConfig } from '#test/support/service.ts';
import { ingestBesideExport } from './export-beside.ts';
import { startDrainReceiver } from './receiver.ts';
import { BENCH_DEVICE, insertBenchDevice, openBenchDatabase } from './seed-events.ts';

const N = Number(process.env.BENCH_EXPORT_EVENTS ?? 200_000);
const BATCH = 1000;
const CHUNK = 100_000;
const INGEST_S = Number(process.env.BENCH_EXPORT_INGEST_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 4);
const KINDS = process.env.BENCH_EXPORT_KINDS?.split(',').map((k) => k.trim());
const MAPPING_GOAL = 50_000;
const actor: AuditActor = { id: 'bench', email: 'bench@example.com', ipAddress: '127.0.0.1' };

const { database, url: dbUrl, drop } = await openBenchDatabase();
const { db } = database;
const config = testConfig({
  exports: { batch: BATCH, time_budget: '1h', timeout: '60s', secrets: { hec: 't', hook: 'k'.repeat(32) } },
});

// A receiver in a thread of its own that takes every request and drains it.
const receiver = await startDrainReceiver();
const { url } = receiver;

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;
const rate = (n: number, s: number) => Math.round(n / s);
const fmt = (n: number) => n.toLocaleString('en');

try {
  await migrate(db);
  await insertBenchDevice(db);
  const today = new Date().toISOString().slice(0, 10);
  await db.execute(sql`SELECT observability_events_add_partition(${today}::date)`);
  const t0 = process.hrtime.bigint();
  for (let done = 0; done < N; done += CHUNK) {
    const n = Math.min(CHUNK, N - done);
    await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, event_time,
        agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, rule_applied, model, session_id,
        actor_email, tokens_in, tokens_out, duration_ms, ingest_xid)
      SELECT gen_random_uuid(), ${BENCH_DEVICE}::uuid, 'BENCH-1', '10.0.0.1',
        now() - interval '1 hour' + (g::double precision / ${N}::int) * interval '1 hour',
        (ARRAY['claude-code', 'cursor', 'codex'])[1 + g % 3], (ARRAY['github', 'filesystem', 'postgres'])[1 + g % 3],
        'tool_' || (g % 17), CASE WHEN g % 10 = 9 THEN 'error' ELSE 'invocation' END,
        CASE WHEN g % 20 = 3 THEN 'denied' WHEN g % 10 = 9 THEN 'error' ELSE 'allowed' END,
        CASE WHEN g % 20 = 3 THEN 'path_outside_workspace' END, CASE WHEN g % 20 = 3 THEN 'outside the workspace' END,
        CASE WHEN g % 20 = 3 THEN 'ws-only@4' END, 'claude-sonnet-4', 'session-' || (g / 50),
        'user' || (g % 300) || '@example.com', g % 2000, g % 700, g % 900, pg_current_xact_id()
      FROM generate_series(${done}::int, ${done + n - 1}::int) AS g`);
  }
  await db.execute(sql`ANALYZE observability_events`);
  // The delivery reads events older than every running transaction of the cluster: on a shared server, wait for them.
  for (let waited = 0; ; waited++) {
    const [row] = await queryRows(
      db,
      sql`SELECT count(*)::text AS n FROM observability_events e WHERE ${SETTLED}`,
      { n: col.text },
    );
    if (Number(row?.n) === N) break;
    if (waited > 600) throw new Error('the events never settled (a long transaction on the server)');
    await sleep(500);
  }
  console.log(
    `bench:export: ${fmt(N)} stored events (seeded in ${seconds(t0).toFixed(1)} s), batches of ${fmt(BATCH)}, node ${process.version}, one core; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${availableParallelism()} cores (compare ratios within the run)`,
  );

  // The baseline: the delivery's own read, cursor to end, nothing mapped or sent.
  let cursor = { xid: '0', id: '0' };
  const sample: ExportSource[][] = [];
  const tr = process.hrtime.bigint();
  for (;;) {
    const batch = await readBatch(db, cursor, BATCH);
    if (!batch.last) break;
    if (sample.length < 100) sample.push(batch.sources);
    cursor = batch.last;
  }
  const readRate = rate(N, seconds(tr));
  console.log(`  raw read (after the cursor, parsed): ${fmt(readRate)} events/s — the baseline (1.00)`);

  // The mappings alone, what every shape of them pays before encoding (goal: 50,000 events/s each).
  const mappings: [string, (s: ExportSource) => unknown][] = [
    ['OTLP spans + duration point', (s) => [toOtelSpans(s), toOtelDurationPoint(s)]],
    ['OCSF API Activity (6003)', toOcsfApiActivity],
  ];
  const sources = sample.flat();
  for (const [name, map] of mappings) {
    for (const s of sources.slice(0, 5000)) map(s); // warm-up
    const tm = process.hrtime.bigint();
    for (const s of sources) map(s);
    const r = rate(sources.length, seconds(tm));
    console.log(
      `  mapping ${name}: ${fmt(r)} events/s (${(r / readRate).toFixed(2)}× the read; goal ${fmt(MAPPING_GOAL)}: ${r >= MAPPING_GOAL ? 'PASS' : 'FAIL'})`,
    );
  }

  const hec = hecBody(splunkHecSettings.parse({ url }));
  const shapes: [string, (b: ExportSource[]) => number][] = [
    [
      'OTLP protobuf (traces + metrics)',
      (b) => tracesBody(b, 'protobuf').length + metricsBody(b, 'protobuf').length,
    ],
    ['OTLP JSON (traces + metrics)', (b) => tracesBody(b, 'json').length + metricsBody(b, 'json').length],
    [
      'OCSF JSON lines (webhook)',
      (b) => b.map((s) => `${JSON.stringify(toOcsfApiActivity(s))}\n`).join('').length,
    ],
    ['HEC JSON (OCSF events)', (b) => hec(b).length],
  ];
  const sampled = sample.reduce((n, b) => n + b.length, 0);
  for (const [name, encode] of shapes) {
    for (const b of sample.slice(0, 5)) encode(b); // warm-up
    const ts = process.hrtime.bigint();
    let bytes = 0;
    for (const b of sample) bytes += encode(b);
    const r = rate(sampled, seconds(ts));
    console.log(
      `  shape ${name}: ${fmt(r)} events/s (${(r / readRate).toFixed(2)}× the read, ${Math.round(bytes / sampled)} B/event)`,
    );
  }

  const kinds: [string, Pick<CreateDestinationBody, 'kind' | 'settings' | 'secret_ref'>][] = [
    ['otlp_http protobuf', { kind: 'otlp_http', settings: { endpoint: url } }],
    ['otlp_http JSON', { kind: 'otlp_http', settings: { endpoint: url, encoding: 'json' } }],
    ['splunk_hec', { kind: 'splunk_hec', settings: { url }, secret_ref: 'hec' }],
    ['webhook', { kind: 'webhook', settings: { url }, secret_ref: 'hook' }],
  ];
  for (const [name, body] of kinds.filter(([name]) => !KINDS || KINDS.includes(name))) {
    await db.execute(sql`UPDATE export_destinations SET enabled = false`);
    await createDestination(
      db,
      { name: name.replace(/\W+/g, '-').toLowerCase(), enabled: true, start: 'oldest', ...body },
      actor,
    );
    const cpu0 = process.threadCpuUsage();
    const td = process.hrtime.bigint();
    const [pass] = await deliverExports(db, config);
    const s = seconds(td);
    const cpu = process.threadCpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    if (pass?.delivered !== N) throw new Error(`${name} delivered ${pass?.delivered}: ${pass?.error}`);
    const r = rate(N, s);
    console.log(
      `  destination ${name}: ${fmt(r)} events/s (${(r / readRate).toFixed(2)}× the read), replay of ${fmt(N)} in ${s.toFixed(1)} s (${(s / 60).toFixed(1)} min); the sending thread used ${cpuSeconds.toFixed(1)} s of CPU, ${fmt(rate(N, cpuSeconds))} events per CPU-second`,
    );
  }

  // Ingest alone and with an OTLP export beside it (same database, same run, windows alternated).
  if (ROUNDS > 0) {
    const beside = await ingestBesideExport({ db, url: dbUrl, rounds: ROUNDS, seconds: INGEST_S });
    const ratio = beside.beside / beside.alone;
    console.log(
      `  ingest alone: ${fmt(Math.round(beside.alone))} events/s; with an OTLP export running: ${fmt(Math.round(beside.beside))} events/s (${ratio.toFixed(2)}×, goal ≥ 0.90: ${ratio >= 0.9 ? 'PASS' : 'FAIL'}; ${fmt(beside.exported)} exported meanwhile; ${ROUNDS} rounds of ${INGEST_S} s each)`,
    );
  }
  const received = await receiver.received();
  console.log(
    `  received ${fmt(received.bytes)} bytes in all, ${fmt(received.requests)} requests over ${fmt(received.connections)} connections`,
  );
} finally {
  await receiver.close();
  await drop();
}
