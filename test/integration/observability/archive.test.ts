// The event archive (shared/observability/archive/archive.ts): closed hours of events as Parquet with a
// manifest, in a directory and in S3 (s3rver, through the real @aws-sdk/client-s3), read back with a real Parquet
// reader (hyparquet) and held to PostgreSQL's counts and sums per hour; resumed from its watermark, rewritten whole
// on a rerun, after a crash and for late events, exactly once under two overlapping runs; and retention that never
// drops a day the archive does not hold whole, even with an insert held open across the drop (a second connection, on
// PostgreSQL and the Data API; PGlite has one connection, so there the insert commits just before the drop).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { parquetReadObjects } from 'hyparquet';
import type { Config } from '#shared/core/config/schema.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { DirectoryObjectStore } from '#shared/core/object-store/dir-store.ts';
import { S3ObjectStore } from '#shared/core/object-store/s3-store.ts';
import { archiveClosedHours, readArchivedHour } from '#shared/observability/archive/archive.ts';
import { type ArchiveStore, archiveLocation } from '#shared/observability/archive/store.ts';
import { archiveWatermark } from '#shared/observability/archive/watermark.ts';
import { getSession, listEvents } from '#shared/observability/events/events.ts';
import {
  applyEventRetention,
  eventRetentionCutoff,
  listEventPartitions,
  utcDay,
} from '#shared/observability/partitions/maintenance.ts';
import { foldRollups } from '#shared/observability/rollups/rollups.ts';
import { filtersQuery, listEventsQuery, sessionQuery } from '#shared/observability/schemas.ts';
import { observabilityFilters } from '#shared/observability/summary/filter-values.ts';
import { scheduleRuns } from '#shared/routes.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import { startTestService, testConfig } from '#test/support/service.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface HourFigures {
  rows: number;
  duration: number;
  tokens: number;
  byResult: Record<string, number>;
}

/** PostgreSQL's figures per hour (ISO hour → figures). */
async function databaseFigures(db: Db): Promise<Map<string, HourFigures>> {
  const rows = await queryRows(
    db,
    sql`SELECT (floor(extract(epoch FROM event_time) / 3600) * 3600000)::bigint::text AS ms, result,
        count(*)::text AS n, sum(duration_ms)::text AS duration, sum(tokens_in + tokens_out)::text AS tokens
      FROM observability_events GROUP BY 1, 2`,
    { ms: col.text, result: col.text, n: col.text, duration: col.text, tokens: col.text },
  );
  const figures = new Map<string, HourFigures>();
  for (const r of rows) {
    const hour = new Date(Number(r.ms)).toISOString();
    const f = figures.get(hour) ?? { rows: 0, duration: 0, tokens: 0, byResult: {} };
    f.rows += Number(r.n);
    f.duration += Number(r.duration);
    f.tokens += Number(r.tokens);
    f.byResult[r.result] = Number(r.n);
    figures.set(hour, f);
  }
  return figures;
}

/** The archive's figures for the same hours, read back from the store with hyparquet; and every archived id. */
async function archiveFigures(
  store: ArchiveStore,
  prefix: string,
  hours: Iterable<string>,
): Promise<{ figures: Map<string, HourFigures>; ids: string[] }> {
  const figures = new Map<string, HourFigures>();
  const ids: string[] = [];
  for (const hour of hours) {
    const archived = await readArchivedHour(store, prefix, new Date(hour));
    if (!archived) continue;
    const f: HourFigures = { rows: 0, duration: 0, tokens: 0, byResult: {} };
    for (const part of archived.parts) {
      const file = part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength) as ArrayBuffer;
      const rows = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
      for (const row of rows) {
        const eventTime = row.event_time as Date;
        assert.equal(
          new Date(Math.floor(eventTime.getTime() / HOUR) * HOUR).toISOString(),
          hour,
          'every row in its own hour',
        );
        f.rows++;
        f.duration += Number(row.duration_ms);
        f.tokens += Number(row.tokens_in) + Number(row.tokens_out);
        const result = String(row.result);
        f.byResult[result] = (f.byResult[result] ?? 0) + 1;
        ids.push(String(row.id));
      }
    }
    assert.equal(archived.manifest.rows, f.rows, 'the manifest counts the rows');
    figures.set(hour, f);
  }
  return { figures, ids };
}

const devices = new Map<Db, string>();

/** Events at the given instants, stamped by their transaction (the fold reads it); returns how many. */
async function insertEvents(
  db: Db,
  at: Date[],
  tool = 'search',
  session: string | null = null,
): Promise<number> {
  let device = devices.get(db);
  if (!device) {
    device = randomUUID();
    await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject,
        certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
      VALUES (${device}::uuid, ${`SER-${device.slice(0, 8)}`}, 'b', 'm', 'o', ${device}, 'pem', 'p256', now(), now())`);
    devices.set(db, device);
  }
  const times = JSON.stringify(at.map((t) => t.toISOString()));
  await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time, agent_type,
      mcp_name, tool, event_type, result, deny_code, prompt, tokens_in, tokens_out, duration_ms, skills, metadata,
      ingest_xid, session_id)
    SELECT gen_random_uuid(), ${device}::uuid, 'SER', t.at::timestamptz, 'claude-code', 'github', ${tool},
      'invocation', (ARRAY['allowed', 'denied', 'error'])[1 + t.i % 3],
      CASE WHEN t.i % 3 = 1 THEN 'policy' END, CASE WHEN t.i % 4 = 0 THEN 'a prompt ' || t.i END,
      t.i % 50, t.i % 7, (t.i * 37) % 1000, '["s"]'::jsonb, jsonb_build_object('i', t.i), pg_current_xact_id(),
      ${session}::text
    FROM jsonb_array_elements_text(${times}::jsonb) WITH ORDINALITY AS t(at, i)`);
  return at.length;
}

/** `n` instants spread over the hour starting at `hour`, including its first and last microsecond. */
const spread = (hour: number, n: number): Date[] =>
  Array.from({ length: n }, (_, i) =>
    i === 0
      ? new Date(hour)
      : i === n - 1
        ? new Date(hour + HOUR - 1)
        : new Date(hour + i * Math.floor(HOUR / n)),
  );

const archiveConfig = (archive: Record<string, unknown>): Config =>
  testConfig({ events: { archive: { delay: '1h', ...archive } } });

/** A store that fails after `okPuts` writes: the process dying mid-hour. */
function crashingStore(inner: ArchiveStore, okPuts: number): ArchiveStore {
  let puts = 0;
  return {
    location: inner.location,
    get: (key) => inner.get(key),
    list: (prefix) => inner.list(prefix),
    put: async (key, body, type) => {
      if (puts++ >= okPuts) throw new Error('crash after the first object');
      await inner.put(key, body, type);
    },
  };
}

async function openDatabase(provisioned: ProvisionedDatabase): Promise<Database> {
  return connectDatabase({
    db: {
      dsn: provisioned.dsn,
      max_open_conns: 4,
      max_idle_conns: 4,
      max_idle_time: 10_000,
      statement_timeout: 60_000,
      resume_wait: 20_000,
    },
  });
}

for (const driver of driversUnderTest()) {
  describe(`event archive on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    let db: Db;
    let s3: S3Server;
    let dir: string;
    // Three days ago, 05:00: hours 0, 1, 2 and 4 hold events, hour 3 none.
    const base = Math.floor((Date.now() - 3 * DAY) / DAY) * DAY + 5 * HOUR;
    const hours = [0, 1, 2, 3, 4].map((h) => new Date(base + h * HOUR).toISOString());

    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await openDatabase(provisioned);
      db = database.db;
      await migrate(db);
      s3 = await startS3Server();
      dir = mkdtempSync(join(tmpdir(), 'acp-archive-'));
      for (const h of [0, 1, 2, 4]) await insertEvents(db, spread(base + h * HOUR, 40 + h * 7));
      await foldRollups(db);
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
      await s3?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('to S3: resumes from its watermark, at most max_hours_per_run a call; counts and sums per hour equal PostgreSQL', async () => {
      const config = archiveConfig({
        target: 's3',
        bucket: s3.bucket,
        endpoint: s3.endpoint,
        region: 'us-east-1',
        prefix: 'acp',
        max_hours_per_run: 2,
      });
      const store = new S3ObjectStore(config.events.archive);
      try {
        const first = await archiveClosedHours(db, store, config);
        assert.deepEqual(
          first.hours.map((h) => [h.hour, h.late]),
          [
            [hours[0], false],
            [hours[1], false],
          ],
        );
        assert.equal(first.watermark, hours[2]);
        assert.equal((await archiveWatermark(db))?.toISOString(), hours[2]);
        const second = await archiveClosedHours(db, store, config);
        assert.deepEqual(
          second.hours.map((h) => h.hour),
          [hours[2], hours[4]],
          'from the watermark on; the empty hour is passed',
        );
        const third = await archiveClosedHours(db, store, config);
        assert.deepEqual(third.hours, [], 'nothing more is closed');
        assert.ok(
          Date.parse(third.watermark!) > Date.now() - 3 * HOUR,
          'the watermark reaches the closed hours',
        );

        const expected = await databaseFigures(db);
        const { figures, ids } = await archiveFigures(store, 'acp', hours);
        assert.deepEqual(figures, expected);
        assert.equal(new Set(ids).size, ids.length);
        const raw = await store.get(`acp/events/dt=${hours[0]!.slice(0, 10)}/hour=05/_manifest.json`);
        assert.ok(raw, 'the Hive-partitioned key');
        const manifest = JSON.parse(new TextDecoder().decode(raw));
        assert.deepEqual(Object.keys(manifest), ['schema_version', 'hour', 'rows', 'objects']);
        assert.equal(manifest.rows, 40);
        assert.match(manifest.objects[0].sha256, /^[0-9a-f]{64}$/);
        assert.equal(
          manifest.objects[0].key,
          `acp/events/dt=${hours[0]!.slice(0, 10)}/hour=05/part-0000.parquet`,
        );
        // Where pages say the archive is (archive_location, once retention has dropped a day): the objects are under it.
        const location = archiveLocation(config.events.archive);
        assert.equal(location, `s3://${s3.bucket}/acp/events/`);
        const key = `${location!.slice(`s3://${s3.bucket}/`.length)}dt=${hours[0]!.slice(0, 10)}/hour=05/_manifest.json`;
        assert.ok(await store.get(key), 'the manifest is under archive_location');
        // Retention has dropped nothing: a page reaching back to 2000 has lost nothing, and says nothing.
        const page = await listEvents(db, config, listEventsQuery.parse({ from: '2000-01-01T00:00:00Z' }));
        assert.equal(page.archived_before, undefined);
        assert.equal(page.archive_location, undefined);
      } finally {
        store.close();
      }
    });

    const reset = async () => {
      await db.execute(sql`UPDATE observability_archive_state SET next_hour = NULL`);
      await db.execute(sql`DELETE FROM observability_archive_hours`);
    };
    const dirConfig = (sub: string, max = 24) =>
      archiveConfig({ target: 'dir', dir: join(dir, sub), prefix: 'p', max_hours_per_run: max });
    const runToEnd = async (store: ArchiveStore, config: Config) => {
      for (let i = 0; i < 20; i++)
        if ((await archiveClosedHours(db, store, config)).hours.length === 0) return;
      assert.fail('the archive never caught up');
    };

    test('a rerun rewrites the same objects with an identical manifest', async () => {
      await reset();
      const config = dirConfig('rerun');
      const store = new DirectoryObjectStore(config.events.archive.dir);
      await runToEnd(store, config);
      // Where pages say the archive is: the hours are in it.
      const location = archiveLocation(config.events.archive);
      assert.equal(location, `${join(dir, 'rerun', 'p', 'events')}/`);
      assert.ok(existsSync(join(location!, `dt=${hours[0]!.slice(0, 10)}`, 'hour=05', '_manifest.json')));
      const manifests = async () =>
        Promise.all(
          hours.map(async (h) => {
            const key = `p/events/dt=${h.slice(0, 10)}/hour=${h.slice(11, 13)}/_manifest.json`;
            const bytes = await store.get(key);
            return bytes ? Buffer.from(bytes).toString('utf8') : undefined;
          }),
        );
      const firstManifests = await manifests();
      assert.equal(
        firstManifests.filter(Boolean).length,
        4,
        'four hours with events, none for the empty one',
      );
      await reset();
      await runToEnd(store, config);
      assert.deepEqual(await manifests(), firstManifests, 'byte for byte');
      const { figures } = await archiveFigures(store, 'p', hours);
      assert.deepEqual(figures, await databaseFigures(db));
    });

    test('a crash after the first object, then a rerun: every event exactly once', async () => {
      await reset();
      const config = dirConfig('crash');
      const store = new DirectoryObjectStore(config.events.archive.dir);
      await assert.rejects(archiveClosedHours(db, crashingStore(store, 1), config), /crash/);
      assert.equal(await archiveWatermark(db), null, 'the watermark did not move');
      assert.deepEqual(await queryRows(db, sql`SELECT count(*)::int AS n FROM observability_archive_hours`), [
        { n: 0 },
      ]);
      await runToEnd(store, config);
      const { figures, ids } = await archiveFigures(store, 'p', hours);
      assert.deepEqual(figures, await databaseFigures(db));
      assert.equal(new Set(ids).size, ids.length);
    });

    test('two overlapping runs: each hour exported by one of them, every event exactly once', async () => {
      await reset();
      const config = dirConfig('overlap', 1);
      const store = new DirectoryObjectStore(config.events.archive.dir);
      const runs = await Promise.all([
        archiveClosedHours(db, store, config),
        archiveClosedHours(db, store, config),
        archiveClosedHours(db, store, config),
      ]);
      const exported = runs.flatMap((r) => r.hours.map((h) => h.hour));
      if (driver !== 'pglite') {
        // A run that finds the archive's row held by another stops at once (PGlite has one connection: its
        // transactions cannot overlap at all).
        let release!: () => void;
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => {
          locked = resolve;
        });
        const holder = db.transaction(async (tx) => {
          await tx.execute(sql`SELECT 1 FROM observability_archive_state FOR UPDATE`);
          locked();
          await new Promise<void>((resolve) => {
            release = resolve;
          });
        });
        await isLocked;
        const blocked = await archiveClosedHours(db, store, config).finally(() => release());
        await holder;
        assert.deepEqual([blocked.busy, blocked.hours], [true, []]);
      }
      assert.equal(new Set(exported).size, exported.length, `no hour twice: ${exported.join(', ')}`);
      await runToEnd(store, dirConfig('overlap'));
      const { figures, ids } = await archiveFigures(store, 'p', hours);
      assert.deepEqual(figures, await databaseFigures(db));
      assert.equal(new Set(ids).size, ids.length);
      const [count] = await queryRows(db, sql`SELECT count(*)::int AS n FROM observability_events`);
      assert.equal(ids.length, count?.n);
    });

    test('late events for an archived hour (and for a passed empty one) archive those hours again, whole', async () => {
      const config = dirConfig('overlap');
      const store = new DirectoryObjectStore(config.events.archive.dir);
      await insertEvents(db, [new Date(base + HOUR + 1234), new Date(base + 3 * HOUR + 5)], 'late');
      await foldRollups(db);
      const run = await archiveClosedHours(db, store, config);
      assert.deepEqual(
        run.hours.map((h) => [h.hour, h.late]),
        [
          [hours[1], true],
          [hours[3], true],
        ],
      );
      assert.deepEqual((await archiveClosedHours(db, store, config)).hours, [], 'once');
      const { figures, ids } = await archiveFigures(store, 'p', hours);
      assert.deepEqual(figures, await databaseFigures(db));
      assert.equal(new Set(ids).size, ids.length);
    });

    test('the schedule runs it as npm start does; without an archive there is no schedule', async () => {
      const archiveDir = join(dir, 'service');
      const svc = await startTestService(driver, {
        events: { archive: { target: 'dir', dir: archiveDir, prefix: 'svc' } },
      });
      try {
        assert.ok(scheduleRuns('eventArchive', svc.runtime.config));
        await insertEvents(svc.runtime.database.db, spread(base, 10));
        const result = (await svc.runSchedule('eventArchive')) as Record<string, unknown>;
        assert.deepEqual([result.target, result.hours, result.rows], ['dir', 1, 10]);
        const archived = await readArchivedHour(new DirectoryObjectStore(archiveDir), 'svc', new Date(base));
        assert.equal(archived?.manifest.rows, 10);
      } finally {
        await svc.dispose();
      }
      assert.equal(scheduleRuns('eventArchive', testConfig()), false);
    });

    test('retention keeps a day past the window until the archive holds all of it', async () => {
      const now = new Date();
      const oldDay = utcDay(new Date(now.getTime() - 95 * DAY));
      await db.execute(sql`SELECT observability_events_add_partition(${oldDay}::date)`);
      const dayStart = Date.parse(`${oldDay}T00:00:00Z`);
      // A session that began on that day and goes on now.
      await insertEvents(
        db,
        [1, 12, 23].map((h) => new Date(dayStart + h * HOUR + 999)),
        'old',
        'sess-archived',
      );
      await insertEvents(db, [new Date()], 'old', 'sess-archived');
      await foldRollups(db);
      await reset();
      const oldName = `observability_events_p${oldDay.replaceAll('-', '')}`;
      const names = async () => (await listEventPartitions(db)).map((p) => p.name);
      const config = dirConfig('retention', 2);
      const store = new DirectoryObjectStore(config.events.archive.dir);
      const readSession = () => getSession(db, config, 'sess-archived', sessionQuery.parse({}));
      // Nothing dropped yet: the session is whole in the database, and says nothing of an archive.
      const whole = await readSession();
      assert.equal(whole.session.calls, 4);
      assert.equal(whole.archived_before, undefined);
      assert.equal(whole.archive_location, undefined);

      assert.deepEqual((await applyEventRetention(db, config, now)).dropped, [], 'nothing archived yet');
      const first = await archiveClosedHours(db, store, config, now);
      assert.deepEqual(
        first.hours.map((h) => h.hour),
        [1, 12].map((h) => new Date(dayStart + h * HOUR).toISOString()),
      );
      assert.deepEqual((await applyEventRetention(db, config, now)).dropped, [], 'hour 23 is not archived');
      assert.ok((await names()).includes(oldName));
      await archiveClosedHours(db, store, config, now);
      assert.ok(Number((await archiveWatermark(db))?.getTime()) >= dayStart + DAY, 'past the day');

      // An event arrives late for the old day: until it is archived, the day stays.
      await insertEvents(db, [new Date(dayStart + 7 * HOUR)], 'old');
      await foldRollups(db);
      assert.deepEqual(
        (await applyEventRetention(db, config, now)).dropped,
        [],
        'a late hour is not archived',
      );
      const late = await archiveClosedHours(db, store, config, now);
      assert.deepEqual(
        late.hours.filter((h) => h.late).map((h) => h.hour),
        [new Date(dayStart + 7 * HOUR).toISOString()],
      );
      const run = await applyEventRetention(db, config, now);
      assert.deepEqual(
        run.dropped.map((d) => [d.name, d.rows]),
        [[oldName, 4]],
      );
      const { figures } = await archiveFigures(
        store,
        'p',
        [1, 7, 12, 23].map((h) => new Date(dayStart + h * HOUR).toISOString()),
      );
      assert.deepEqual(
        [...figures.values()].map((f) => f.rows),
        [1, 1, 1, 1],
        'the dropped day is in the archive',
      );
      // The session's read says its older events are archived, and where: its dropped events are under that location.
      const kept = await readSession();
      assert.equal(kept.session.calls, 1, 'the stored event only');
      assert.equal(kept.archived_before, eventRetentionCutoff(config).toISOString());
      assert.equal(kept.archive_location, `${join(dir, 'retention', 'p', 'events')}/`);
      const sessionsInArchive: unknown[] = [];
      for (const h of [1, 12, 23]) {
        const hourDir = join(kept.archive_location!, `dt=${oldDay}`, `hour=${String(h).padStart(2, '0')}`);
        assert.ok(existsSync(join(hourDir, '_manifest.json')), 'the manifest is under archive_location');
        const bytes = readFileSync(join(hourDir, 'part-0000.parquet'));
        const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
        for (const row of (await parquetReadObjects({ file })) as Array<Record<string, unknown>>)
          sessionsInArchive.push(row.session_id);
      }
      assert.deepEqual(sessionsInArchive, ['sess-archived', 'sess-archived', 'sess-archived']);
      // The event list and the filters of a range over the dropped day say the same; of a range after it, nothing.
      const dayRange = { from: `${oldDay}T00:00:00Z`, to: `${oldDay}T23:00:00Z` };
      const pastPage = await listEvents(db, config, listEventsQuery.parse(dayRange));
      assert.deepEqual(pastPage.events, []);
      assert.deepEqual(
        [pastPage.archived_before, pastPage.archive_location],
        [kept.archived_before, kept.archive_location],
      );
      const pastFilters = await observabilityFilters(db, config, filtersQuery.parse(dayRange));
      assert.deepEqual(
        [pastFilters.archived_before, pastFilters.archive_location],
        [kept.archived_before, kept.archive_location],
      );
      const dayAfter = new Date(dayStart + DAY).toISOString();
      const later = await listEvents(db, config, listEventsQuery.parse({ from: dayAfter }));
      assert.equal(later.archived_before, undefined, 'a range after the dropped day has lost nothing');

      // Without an archive, retention drops a day past the window whatever the archive holds.
      const other = utcDay(new Date(now.getTime() - 93 * DAY));
      await db.execute(sql`SELECT observability_events_add_partition(${other}::date)`);
      await insertEvents(db, [new Date(Date.parse(`${other}T03:00:00Z`))], 'old');
      // As the partitions function does: the fold first, so retention sees the hour's new count.
      await foldRollups(db);
      const guarded = await applyEventRetention(db, config, now);
      assert.deepEqual(guarded.dropped, [], 'archive configured: kept');
      const unguarded = await applyEventRetention(db, testConfig(), now);
      assert.deepEqual(
        unguarded.dropped.map((d) => d.name),
        [`observability_events_p${other.replaceAll('-', '')}`],
      );
    });

    test('an insert held open across the drop of its day: the event is still stored or archived, never lost', async () => {
      const now = new Date();
      const day = utcDay(new Date(now.getTime() - 97 * DAY));
      const dayStart = Date.parse(`${day}T00:00:00Z`);
      const name = `observability_events_p${day.replaceAll('-', '')}`;
      await db.execute(sql`SELECT observability_events_add_partition(${day}::date)`);
      await insertEvents(db, spread(dayStart + 2 * HOUR, 5), 'raced');
      await foldRollups(db);
      await reset();
      const config = dirConfig('race');
      const store = new DirectoryObjectStore(config.events.archive.dir);
      await runToEnd(store, config);
      const device = devices.get(db)!;
      // As in psql: a plain INSERT into an archived hour of the day (no ingest_xid, so the fold never counts it).
      const insertByHand = async (into: Db) => {
        const [row] = await queryRows(
          into,
          sql`INSERT INTO observability_events (device_id, serial_number, event_time, agent_type, mcp_name, tool,
              event_type, result)
            VALUES (${device}::uuid, 'SER', ${new Date(dayStart + 2 * HOUR + 777).toISOString()}::timestamptz, 'a',
              'm', 'by-hand', 'invocation', 'allowed') RETURNING id::text AS id`,
          { id: col.text },
        );
        return row!.id;
      };
      /** Inserts by hand in a transaction held open until `release` is called (to commit, or to roll back). */
      const holdOpen = async () => {
        let finish!: (commit: boolean) => void;
        let opened!: (id: string) => void;
        const id = new Promise<string>((resolve) => {
          opened = resolve;
        });
        const done = db
          .transaction(async (tx) => {
            opened(await insertByHand(tx));
            const commit = await new Promise<boolean>((resolve) => {
              finish = resolve;
            });
            if (!commit) throw new Error('rolled back');
          })
          .catch((err: Error) => assert.equal(err.message, 'rolled back'));
        const release = async (commit: boolean) => {
          finish(commit);
          await done;
        };
        return { id: await id, release };
      };
      const waitsForLock = async () => {
        for (let i = 0; i < 400; i++) {
          const [row] = await queryRows(
            db,
            sql`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted
              AND relation IN ('observability_events'::regclass, ${name}::regclass)) AS waiting`,
          );
          if (row?.waiting) return;
          await new Promise((r) => setTimeout(r, 25));
        }
        assert.fail('retention never waited for the held insert');
      };
      const stored = async (id: string) =>
        Number(
          (
            await queryRows(
              db,
              sql`SELECT count(*)::int AS n FROM observability_events WHERE id = ${id}::bigint`,
            )
          )[0]?.n,
        );
      const written: string[] = [];
      if (driver === 'pglite') {
        // PGlite is one connection: no transaction can be open while another runs, so the insert can only commit
        // before the drop's transaction starts; the recount under the lock still finds it.
        written.push(await insertByHand(db));
        const run = await applyEventRetention(db, config, now);
        assert.deepEqual(run.dropped, [], 'the day holds an event the archive lacks');
        assert.deepEqual(run.kept, [
          { name, reason: 'unarchived', hours: [new Date(dayStart + 2 * HOUR).toISOString()] },
        ]);
      } else {
        // The drop cannot wait forever for a write: past the lock timeout it keeps the day for the next run.
        const timedOut = await holdOpen();
        const skipped = await applyEventRetention(db, config, now, { lockTimeoutMs: 200 });
        assert.deepEqual([skipped.dropped, skipped.kept], [[], [{ name, reason: 'locked' }]]);
        await timedOut.release(false);
        // The insert commits while the drop waits for it (the drop began after it, with the day archived whole).
        const held = await holdOpen();
        const racing = applyEventRetention(db, config, now, { lockTimeoutMs: 30_000 });
        await waitsForLock();
        await held.release(true);
        written.push(held.id);
        const run = await racing;
        assert.deepEqual(run.dropped, [], 'the event committed during the wait is counted: the day stays');
        assert.deepEqual(run.kept, [
          { name, reason: 'unarchived', hours: [new Date(dayStart + 2 * HOUR).toISOString()] },
        ]);
      }
      for (const id of written) assert.equal(await stored(id), 1, 'still stored');
      // The archive writes the hour again, whole; then the day goes, and every event of it is in the archive.
      await foldRollups(db);
      const rewritten = await archiveClosedHours(db, store, config, now);
      assert.deepEqual(
        rewritten.hours.map((h) => [h.hour, h.rows, h.late]),
        [[new Date(dayStart + 2 * HOUR).toISOString(), 5 + written.length, true]],
      );
      const run = await applyEventRetention(db, config, now);
      assert.deepEqual(
        run.dropped.map((d) => [d.name, d.rows]),
        [[name, 5 + written.length]],
      );
      for (const id of written) assert.equal(await stored(id), 0, 'dropped from the database');
      const { ids } = await archiveFigures(store, 'p', [new Date(dayStart + 2 * HOUR).toISOString()]);
      for (const id of written) assert.ok(ids.includes(id), `event ${id} is in the archive`);
      assert.equal(ids.length, 5 + written.length);
    });
  });
}
