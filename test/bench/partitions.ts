// npm run bench:partitions — what the daily partitions of the events (migrations/0009_events_partitioned.sql) buy:
// removing one day of events by dropping its partition against DELETE of a day of the same size, on PostgreSQL (a
// fresh database on TEST_DATABASE_URL, else a PostgreSQL from npm started for the run). It seeds three days of
// BENCH_ROWS_PER_DAY events each (default 200,000), identical
// in shape, then:
//  1. DELETE FROM observability_events WHERE <day 1>: time, table size after, then VACUUM's time and size after
//     (a DELETE leaves the dead rows in place; VACUUM makes the space reusable but does not return it);
//  2. DROP TABLE of day 2's partition (what retention does): time and table size after.
// Table size = heap + indexes + TOAST of every partition.
import { sql } from 'drizzle-orm';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { insertBenchDevice, openBenchDatabase, seedBenchDay } from './seed-events.ts';

const ROWS_PER_DAY = Number(process.env.BENCH_ROWS_PER_DAY ?? 200_000);
const DAYS = ['2026-06-01', '2026-06-02', '2026-06-03'] as const;

const { database, drop } = await openBenchDatabase();
const db = database.db;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const timed = async (run: () => Promise<unknown>) => {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
};
const tableBytes = async () => {
  const [row] = await queryRows(
    db,
    sql`SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0)::text AS bytes FROM pg_inherits
      WHERE inhparent = 'observability_events'::regclass`,
  );
  return Number(row?.bytes);
};
const rowCount = async () => {
  const [row] = await queryRows(db, sql`SELECT count(*)::text AS n FROM observability_events`);
  return Number(row?.n);
};

try {
  await migrate(db);
  await insertBenchDevice(db);
  const seedStart = performance.now();
  for (const day of DAYS) await seedBenchDay(db, day, ROWS_PER_DAY);
  await db.execute(sql`ANALYZE observability_events`);
  const seeded = await rowCount();
  const seedS = (performance.now() - seedStart) / 1000;
  const before = await tableBytes();
  console.log(
    `seeded ${seeded.toLocaleString('en')} events (${ROWS_PER_DAY.toLocaleString('en')} a day, ${DAYS.length} days) in ${seedS.toFixed(1)} s; table ${mb(before)} (${(before / seeded).toFixed(0)} bytes/event)`,
  );

  const range = (day: string) =>
    sql`event_time >= ${day}::date::timestamp AT TIME ZONE 'UTC' AND event_time < (${day}::date + 1)::timestamp AT TIME ZONE 'UTC'`;
  const deleteMs = await timed(() =>
    db.execute(sql`DELETE FROM observability_events WHERE ${range(DAYS[0])}`),
  );
  const afterDelete = await tableBytes();
  const vacuumMs = await timed(() => db.execute(sql`VACUUM observability_events`));
  const afterVacuum = await tableBytes();
  const dropName = `observability_events_p${DAYS[1].replaceAll('-', '')}`;
  const dropMs = await timed(() => db.execute(sql.raw(`DROP TABLE ${dropName}`)));
  const afterDrop = await tableBytes();
  const left = await rowCount();

  const rows = [
    ['DELETE one day', deleteMs, afterDelete],
    ['  + VACUUM', vacuumMs, afterVacuum],
    ['DROP its partition', dropMs, afterDrop],
  ] as const;
  console.log(`\n| one day of ${ROWS_PER_DAY.toLocaleString('en')} events | time | table size after |`);
  console.log('|---|---|---|');
  for (const [what, ms, bytes] of rows)
    console.log(`| ${what} | ${(ms / 1000).toFixed(3)} s | ${mb(bytes)} |`);
  console.log(
    `\nDROP is ${(deleteMs / dropMs).toFixed(0)}× faster than DELETE (${((deleteMs + vacuumMs) / dropMs).toFixed(0)}× with VACUUM); DELETE left the table at ${mb(afterDelete)} of ${mb(before)}, DROP took it to ${mb(afterDrop)}. ${left.toLocaleString('en')} events left (one day).`,
  );
  if (left !== ROWS_PER_DAY) throw new Error(`expected ${ROWS_PER_DAY} events left, found ${left}`);
} finally {
  await drop();
}
