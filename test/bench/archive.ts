// npm run bench:archive [-- --events N] [-- --store s3] — the event archive (shared/observability/archive/archive.ts) on
// PostgreSQL (a fresh database on TEST_DATABASE_URL, else a PostgreSQL from npm started for the run): it seeds N
// events (default 1,000,000) over one day, in bench:partitions' shape (seed-events.ts), then archives every hour
// of it in one run and prints:
//  - export speed: events per second, the whole run (reading the rows in pages, encoding Parquet, writing each hour
//    and its manifest, recording it);
//  - bytes per event in Parquet (the objects written, manifests included) against bytes per event in PostgreSQL
//    (pg_total_relation_size of the events partitions, heap + indexes + TOAST, over their rows).
// The store is a directory by default; `--store s3` writes through @aws-sdk/client-s3 to s3rver (a local S3 API, so
// it measures the client and the HTTP round trips, not S3's own speed). One hour is read back and checked against
// its manifest and PostgreSQL's count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { parquetReadObjects } from 'hyparquet';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { DirectoryObjectStore } from '#shared/core/object-store/dir-store.ts';
import { S3ObjectStore } from '#shared/core/object-store/s3-store.ts';
import { archiveClosedHours, readArchivedHour } from '#shared/observability/archive/archive.ts';
import type { ArchiveStore } from '#shared/observability/archive/store.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import { testConfig } from '#test/support/service.ts';
import { insertBenchDevice, openBenchDatabase, seedBenchDay } from './seed-events.ts';

const { values: flags } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, store: { type: 'string', default: 'dir' } },
});
const EVENTS = Number(flags.events);
if (!Number.isInteger(EVENTS) || EVENTS < 24) throw new Error('--events must be an integer of at least 24');
if (flags.store !== 'dir' && flags.store !== 's3') throw new Error('--store is dir or s3');
const HOUR = 3_600_000;
// Three days ago: every hour of it is closed.
const DAY = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 3 * 86_400_000)
  .toISOString()
  .slice(0, 10);

const { database, drop } = await openBenchDatabase();
const db = database.db;
const scratch = mkdtempSync(join(tmpdir(), 'acp-bench-archive-'));
let s3: S3Server | undefined;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

try {
  await migrate(db);
  await insertBenchDevice(db);
  const seedStart = performance.now();
  await seedBenchDay(db, DAY, EVENTS);
  await db.execute(sql`ANALYZE observability_events`);
  const seedS = (performance.now() - seedStart) / 1000;
  const [size] = await queryRows(
    db,
    sql`SELECT (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
        WHERE inhparent = 'observability_events'::regclass)::text AS bytes,
      (SELECT count(*) FROM observability_events)::text AS n`,
  );
  const pgBytes = Number(size?.bytes);
  const rows = Number(size?.n);
  console.log(
    `seeded ${rows.toLocaleString('en')} events over ${DAY} in ${seedS.toFixed(1)} s; PostgreSQL ${mb(pgBytes)}`,
  );

  let store: ArchiveStore;
  if (flags.store === 's3') {
    s3 = await startS3Server();
    store = new S3ObjectStore({
      bucket: s3.bucket,
      prefix: 'bench',
      endpoint: s3.endpoint,
      region: 'us-east-1',
    });
  } else {
    store = new DirectoryObjectStore(scratch);
  }
  const config = testConfig({ events: { archive: { delay: '1h', max_hours_per_run: 1000 } } });
  const started = performance.now();
  const run = await archiveClosedHours(db, store, config);
  const exportS = (performance.now() - started) / 1000;
  const archivedRows = run.hours.reduce((n, h) => n + h.rows, 0);
  const parquetBytes = run.hours.reduce((n, h) => n + h.bytes, 0);
  if (archivedRows !== rows) throw new Error(`archived ${archivedRows} of ${rows} events`);

  // One hour read back: its manifest's count, the Parquet rows (hyparquet) and PostgreSQL's agree.
  const hour = new Date(Date.parse(`${DAY}T12:00:00Z`));
  const archived = await readArchivedHour(store, 'archive', hour);
  const part = archived?.parts[0];
  if (!archived || !part) throw new Error('hour 12 is not in the archive');
  const file = part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength) as ArrayBuffer;
  const readBack = (await parquetReadObjects({ file, columns: ['id'] })).length;
  const [pgHour] = await queryRows(
    db,
    sql`SELECT count(*)::text AS n FROM observability_events
      WHERE event_time >= ${hour.toISOString()}::timestamptz AND event_time < ${new Date(hour.getTime() + HOUR).toISOString()}::timestamptz`,
  );
  if (readBack !== archived.manifest.rows || readBack !== Number(pgHour?.n))
    throw new Error(
      `hour 12: ${readBack} rows read, manifest ${archived.manifest.rows}, PostgreSQL ${pgHour?.n}`,
    );

  const perEventPg = pgBytes / rows;
  const perEventParquet = parquetBytes / rows;
  console.log(
    `\n| ${rows.toLocaleString('en')} events, ${run.hours.length} hours, store ${flags.store} | figure |`,
  );
  console.log('|---|---|');
  console.log(
    `| export | ${exportS.toFixed(1)} s, ${Math.round(rows / exportS).toLocaleString('en')} events/s |`,
  );
  console.log(`| Parquet (Snappy) | ${mb(parquetBytes)}, ${perEventParquet.toFixed(1)} bytes/event |`);
  console.log(
    `| PostgreSQL (heap + indexes + TOAST) | ${mb(pgBytes)}, ${perEventPg.toFixed(1)} bytes/event |`,
  );
  console.log(
    `\nParquet takes ${(perEventPg / perEventParquet).toFixed(1)}× less room than PostgreSQL; hour 12 read back: ${readBack.toLocaleString('en')} rows, as its manifest and PostgreSQL.`,
  );
  if (store instanceof S3ObjectStore) store.close();
} finally {
  await drop();
  await s3?.close();
  rmSync(scratch, { recursive: true, force: true });
}
