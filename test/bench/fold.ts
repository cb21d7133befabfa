// npm run bench:fold — the rollup fold under a backlog (shared/observability/rollups/rollups.ts), on PostgreSQL (a fresh
// database on TEST_DATABASE_URL, else a PostgreSQL from npm started for the run). A backlog of BENCH_BACKLOG events
// (default 1,000,000) that the schedule did not fold
// (the schedule down for a while), stored by ingest-sized transactions (BENCH_TX_EVENTS, default 5,000) at the rate
// of a 10,000-laptop fleet (10,000 laptops x 300 calls a day: 125,000 an hour, so 5M span 40 hours), then:
//  1. before: one unbounded fold of the whole backlog, what the first admin read paid when every read folded all
//     that was pending (the previous design);
//  2. baseline: the 30-day summary read p50 / p95 with nothing to fold;
//  3. the same backlog again, folded by the schedule's loop (calls of SCHEDULED_FOLD_MAX_EVENTS, each a transaction)
//     while a second connection reads the summary over and over: the reads' p50 / p95 / max against the baseline
//     (ratios in this run), the fold's events/s, and how many calls and runs of the schedule it takes.
import { sql } from 'drizzle-orm';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { setLogLevel } from '#shared/core/logger.ts';
import {
  FOLD_BUDGET_MS,
  foldBacklog,
  foldRollups,
  READ_TAIL_MAX_EVENTS,
  SCHEDULED_FOLD_MAX_EVENTS,
} from '#shared/observability/rollups/rollups.ts';
import { summaryQuery } from '#shared/observability/schemas.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';
import { createPostgresDatabase, useBenchDatabase } from '#test/support/databases.ts';

await useBenchDatabase();
setLogLevel('error');
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1_000_000);
const TX_EVENTS = Number(process.env.BENCH_TX_EVENTS ?? 5_000);
const DAY = 86_400_000;
const DAYS = 30;
const PER_HOUR = 125_000;
const SPAN_S = Math.ceil((BACKLOG / PER_HOUR) * 3600);

const pgDatabase = await createPostgresDatabase();
const database = await connectDatabase({
  db: {
    dsn: pgDatabase.url,
    max_open_conns: 4,
    max_idle_conns: 2,
    max_idle_time: 60_000,
    statement_timeout: 3_600_000,
    resume_wait: 20_000,
  },
});
const db = database.db;
const now = new Date();
const from = new Date(now.getTime() - DAYS * DAY);
const query = summaryQuery.parse({ from: from.toISOString(), to: now.toISOString(), bucket: 'hour' });
const ms = (value: number) => value.toFixed(1);
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/** BACKLOG events in transactions of TX_EVENTS, each stamped with its transaction as ingest_events stamps them. */
async function seedBacklog(round: number): Promise<number> {
  const t0 = performance.now();
  for (let offset = 0; offset < BACKLOG; offset += TX_EVENTS) {
    const n = Math.min(TX_EVENTS, BACKLOG - offset);
    await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, event_time,
        agent_type, mcp_name, tool, event_type, result, deny_code, model, session_id, actor_email,
        tokens_in, tokens_out, duration_ms, ingest_xid)
      SELECT gen_random_uuid(), '00000000-0000-4000-8000-00000000f001'::uuid, 'BENCH-F', '10.0.0.1',
        ${now.toISOString()}::timestamptz - ${SPAN_S} * interval '1 second'
          + ((g + ${offset})::double precision / ${BACKLOG} * ${SPAN_S}) * interval '1 second',
        (ARRAY['claude-code', 'cursor', 'codex'])[1 + g % 3], (ARRAY['github', 'filesystem', 'postgres', 'slack'])[1 + g % 4],
        'tool_' || (g % 17), CASE WHEN g % 10 = 9 THEN 'error' ELSE 'invocation' END,
        CASE WHEN g % 20 = 3 THEN 'denied' WHEN g % 10 = 9 THEN 'error' ELSE 'allowed' END,
        CASE WHEN g % 20 = 3 THEN 'path_outside_workspace' END, 'claude-sonnet-4', 'session-' || (g / 50),
        'user' || ((g + ${round}) % 300) || '@example.com', g % 2000, g % 700, g % 900, pg_current_xact_id()
      FROM generate_series(0, ${n} - 1) AS g`);
  }
  await db.execute(sql`ANALYZE observability_events`);
  return (performance.now() - t0) / 1000;
}

try {
  await migrate(db);
  await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject, certificate_fingerprint,
      certificate_pem, key_type, cert_not_before, cert_not_after)
    VALUES ('00000000-0000-4000-8000-00000000f001'::uuid, 'BENCH-F', 'b', 'm', 'o', 'fp-bench-f', 'pem', 'p256',
      now(), now())`);
  for (let day = 0; day <= DAYS + 1; day++) {
    const date = new Date(from.getTime() + day * DAY).toISOString().slice(0, 10);
    await db.execute(sql`SELECT observability_events_add_partition(${date}::date)`);
  }
  console.log(
    `bench:fold: a backlog of ${BACKLOG.toLocaleString('en')} events over the last ${(SPAN_S / 3600).toFixed(1)} hours in transactions of ${TX_EVENTS.toLocaleString('en')}, PostgreSQL ${pgDatabase.url.replace(/\/\/[^@]*@/, '//')}`,
  );
  console.log(
    `  reads add at most ${READ_TAIL_MAX_EVENTS.toLocaleString('en')} events of the tail (never fold); the schedule folds ${SCHEDULED_FOLD_MAX_EVENTS.toLocaleString('en')} a call for up to ${FOLD_BUDGET_MS / 1000} s a run`,
  );

  const seed1 = await seedBacklog(1);
  console.log(`  seeded in ${seed1.toFixed(1)} s`);
  const t1 = performance.now();
  const [all] = await queryRows(
    db,
    sql`SELECT folded::text FROM observability_fold(${BACKLOG * 2}::bigint, true)`,
  );
  const unboundedMs = performance.now() - t1;
  console.log(
    `  before (every read folded all that was pending): the first read after the backlog paid ${ms(unboundedMs)} ms (${Number(all?.folded).toLocaleString('en')} events, ${Math.round(Number(all?.folded) / (unboundedMs / 1000)).toLocaleString('en')} events/s)`,
  );

  const baseline: number[] = [];
  await observabilitySummary(db, query, { now });
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    await observabilitySummary(db, query, { now });
    baseline.push(performance.now() - t);
  }
  const base50 = quantile(baseline, 0.5);
  const base95 = quantile(baseline, 0.95);
  console.log(`  baseline: 30-day summary with nothing to fold: p50 ${ms(base50)} ms, p95 ${ms(base95)} ms`);

  const seed2 = await seedBacklog(2);
  console.log(`  the same backlog again, seeded in ${seed2.toFixed(1)} s`);
  const during: number[] = [];
  let folding = true;
  const reads = (async () => {
    while (folding) {
      const t = performance.now();
      await observabilitySummary(db, query, { now });
      during.push(performance.now() - t);
    }
  })();
  const t2 = performance.now();
  let runs = 0;
  let calls = 0;
  let folded = 0;
  for (;;) {
    const run = await foldBacklog(db, FOLD_BUDGET_MS);
    runs++;
    calls += run.calls;
    folded += run.folded;
    if (!run.more) break;
  }
  const foldMs = performance.now() - t2;
  folding = false;
  await reads;
  const left = await foldRollups(db, { wait: true });
  if (left.folded !== 0 || left.more) throw new Error(`the fold left ${left.folded} events`);
  console.log(
    `  the schedule's fold: ${folded.toLocaleString('en')} events in ${(foldMs / 1000).toFixed(1)} s (${Math.round(folded / (foldMs / 1000)).toLocaleString('en')} events/s), ${calls} calls, ${runs} run(s) of up to ${FOLD_BUDGET_MS / 1000} s`,
  );
  const p50 = quantile(during, 0.5);
  const p95 = quantile(during, 0.95);
  const max = Math.max(...during);
  console.log(
    `  reads during that fold (${during.length}): p50 ${ms(p50)} ms (${(p50 / base50).toFixed(2)}x baseline), p95 ${ms(p95)} ms (${(p95 / base95).toFixed(2)}x), max ${ms(max)} ms; before, the first read paid ${(unboundedMs / base95).toFixed(0)}x the baseline p95`,
  );
} finally {
  await database.close();
  await pgDatabase.drop();
}
