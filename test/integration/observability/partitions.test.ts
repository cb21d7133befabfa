// The events table partitioned by day (migrations/0009_events_partitioned.sql): the conversion of an
// unpartitioned table loses no row, the maintenance creates partitions ahead and drains the default partition, and a
// retried event is a duplicate whatever day it is resent on and on either side of midnight.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createDeviceIdentity } from '#agent/identity.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { DEFAULT_MIGRATIONS_DIR, migrate, readMigrations } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import {
  applyEventRetention,
  countEventPartitions,
  eventRetentionCutoff,
  listEventPartitions,
  maintainEventPartitions,
  utcDay,
} from '#shared/observability/partitions/maintenance.ts';
import { foldRollups } from '#shared/observability/rollups/rollups.ts';
import { driversUnderTest, provisionDatabase } from '#test/support/databases.ts';
import { hardware, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const DAY = 86_400_000;
const PARTITIONED = '0009_events_partitioned';

/** A migrations folder holding the files before `stop` (the schema as it was). */
function migrationsBefore(stop: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'acp-migrations-'));
  mkdirSync(join(dir, 'meta'));
  for (const m of readMigrations()) {
    if (m.name >= stop) break;
    copyFileSync(join(DEFAULT_MIGRATIONS_DIR, `${m.name}.sql`), join(dir, `${m.name}.sql`));
  }
  return dir;
}

const fingerprintSql = sql`SELECT count(*)::int AS n, coalesce(sum(id), 0)::text AS ids,
    md5(coalesce(string_agg(row(id, event_id, device_id, serial_number, source_ip, received_at, event_time, agent_type,
      mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model, session_id,
      group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata,
      ingest_xid)::text, '|' ORDER BY id), '')) AS digest
  FROM observability_events`;
const perDaySql = sql`SELECT to_char(event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n
  FROM observability_events GROUP BY 1 ORDER BY 1`;

for (const driver of driversUnderTest()) {
  describe(`event partitions on ${driver}`, () => {
    test('the conversion of the unpartitioned table keeps every row, id and column, each in its day', async () => {
      const scratch = driver === 'pglite' ? mkdtempSync(join(tmpdir(), 'acp-pglite-')) : undefined;
      const provisioned = scratch ? undefined : await provisionDatabase(driver);
      const database: Database = await connectDatabase({
        db: {
          dsn: scratch ? `pglite:${scratch}` : provisioned!.dsn,
          max_open_conns: 1,
          max_idle_conns: 0,
          max_idle_time: 1,
          statement_timeout: 60_000,
          resume_wait: 20_000,
        },
      });
      const old = migrationsBefore(PARTITIONED);
      try {
        const db = database.db;
        const applied = await migrate(db, old);
        assert.ok(!applied.applied.includes(PARTITIONED));
        const device = randomUUID();
        await db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject,
            certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
          VALUES (${device}::uuid, 'SER-1', 'b', 'm', 'o', 'fp', 'pem', 'p256', now(), now())`);
        // 5 days of events (one at each edge of every day), events without event_id, one from 1999, one a year
        // ahead; some stamped with the transaction that stored them (the fold reads it).
        await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time,
            agent_type, mcp_name, tool, event_type, result, deny_reason, tokens_in, metadata, ingest_xid)
          SELECT CASE WHEN g % 7 = 0 THEN NULL ELSE gen_random_uuid() END, ${device}::uuid, 'SER-1',
            timestamptz '2026-03-01 00:00:00+00' + (g % 5) * interval '1 day' + (g * 37 % 86400) * interval '1 second',
            'claude-code', 'github', 'search', 'invocation', 'allowed', CASE WHEN g % 3 = 0 THEN 'why' END, g,
            jsonb_build_object('g', g), CASE WHEN g % 2 = 0 THEN pg_current_xact_id() END
          FROM generate_series(1, 300) AS g`);
        await db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time,
            agent_type, mcp_name, tool, event_type, result)
          VALUES (gen_random_uuid(), ${device}::uuid, 'SER-1', '2026-03-01T00:00:00Z', 'a', 'm', 't', 'invocation', 'allowed'),
            (gen_random_uuid(), ${device}::uuid, 'SER-1', '2026-03-05T23:59:59.999999Z', 'a', 'm', 't', 'result', 'denied'),
            (NULL, ${device}::uuid, 'SER-1', '1999-12-31T23:59:59Z', 'a', 'm', 't', 'error', 'error'),
            (gen_random_uuid(), ${device}::uuid, 'SER-1', now() + interval '365 days', 'a', 'm', 't', 'invocation', 'allowed')`);
        const [before] = await queryRows(db, fingerprintSql);
        const daysBefore = await queryRows(db, perDaySql);
        assert.equal(before?.n, 304);
        assert.equal(daysBefore.length, 7);

        assert.deepEqual((await migrate(db)).applied.slice(0, 1), [PARTITIONED]);

        const [afterwards] = await queryRows(db, fingerprintSql);
        assert.deepEqual(afterwards, before, 'the same rows, ids and values');
        assert.deepEqual(await queryRows(db, perDaySql), daysBefore);
        const partitions = await countEventPartitions(db);
        const stored = partitions.filter((p) => p.rows > 0);
        assert.deepEqual(
          stored.map((p) => [p.from?.slice(0, 10), p.rows]),
          daysBefore.map((d) => [d.day, Number(d.n)]),
          'one partition per day, each holding that day',
        );
        assert.equal(partitions.at(-1)?.name, 'observability_events_default');
        assert.equal(partitions.at(-1)?.rows, 0);
        const today = utcDay(new Date());
        for (let i = 0; i <= 7; i++) {
          const day = utcDay(new Date(Date.parse(today) + i * DAY));
          assert.ok(
            partitions.some((p) => p.from?.startsWith(day)),
            `a partition for ${day} (the week ahead)`,
          );
        }
        // The identity continues after the copied ids.
        const [next] = await queryRows(
          db,
          sql`INSERT INTO observability_events (device_id, serial_number, event_time, agent_type, mcp_name, tool,
              event_type, result)
            VALUES (${device}::uuid, 'SER-1', now(), 'a', 'm', 't', 'invocation', 'allowed') RETURNING id`,
        );
        assert.ok(Number(next?.id) > Number(before?.n), `id ${next?.id} follows the copied ones`);
      } finally {
        await database.close();
        rmSync(old, { recursive: true, force: true });
        if (scratch) rmSync(scratch, { recursive: true, force: true });
        await provisioned?.cleanup();
      }
    });

    describe('ingest into partitions', () => {
      let svc: TestService;
      let db: Db;
      let send1: (
        events: Array<Record<string, unknown>>,
      ) => Promise<{ accepted: number; duplicates: number }>;
      /**
       * Stores events through the ingest statement itself (ingest_events), as it stored them when they were still
       * within the retention window: ingest now refuses them over HTTP (400 event_too_old).
       */
      let storedEarlier: (events: Array<Record<string, unknown>>) => Promise<number>;
      const partitionOf = async (eventId: string) =>
        (
          await queryRows(
            db,
            sql`SELECT tableoid::regclass::text AS part, count(*) OVER ()::int AS n FROM observability_events
              WHERE event_id = ${eventId}::uuid`,
          )
        ).map((r) => r.part);

      before(async () => {
        svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
        db = svc.runtime.database.db;
        const token = await svc.adminToken();
        const identity = await createDeviceIdentity('p256');
        const res = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        assert.equal(res.status, 201, JSON.stringify(res.body));
        send1 = async (events) => {
          const r = await send(svc.url, prepare('/v1/devices/events', identity, { events }));
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return { accepted: Number(r.body.accepted), duplicates: Number(r.body.duplicates) };
        };
        storedEarlier = async (events) => {
          const rows = events.map((e) => ({
            tokens_in: 0,
            tokens_out: 0,
            duration_ms: 0,
            prompt_truncated: false,
            ...e,
          }));
          const [row] = await queryRows(
            db,
            sql`SELECT inserted FROM ingest_events(${identity.fingerprint}, NULL, now(), now(), ${randomUUID()},
              now() + interval '5 minutes', ${JSON.stringify(rows)}::json)`,
          );
          return Number(row?.inserted);
        };
      });
      after(async () => svc?.dispose());

      test('the maintenance creates the days ahead once; the schedule runs it', async () => {
        const now = new Date();
        const first = await maintainEventPartitions(db, svc.runtime.config, now);
        assert.equal(first.created, 0, 'the migration created this week already');
        const later = new Date(now.getTime() + 3 * DAY);
        const run = await maintainEventPartitions(db, svc.runtime.config, later);
        assert.equal(run.created, 3, 'three more days ahead');
        assert.equal((await maintainEventPartitions(db, svc.runtime.config, later)).created, 0);
        const partitions = await listEventPartitions(db);
        const lastAhead = utcDay(new Date(later.getTime() + 7 * DAY));
        assert.ok(partitions.some((p) => p.from?.startsWith(lastAhead)));
        assert.ok(!partitions.some((p) => p.from?.startsWith(utcDay(new Date(later.getTime() + 8 * DAY)))));
        const scheduled = (await svc.runSchedule('eventPartitions')) as Record<string, unknown>;
        assert.deepEqual(
          [scheduled.created, scheduled.stray],
          [0, 0],
          'the scheduled function, as npm start runs it',
        );
      });

      test('a retry is a duplicate on a later day: after its day got a partition and its row moved there', async () => {
        // 20 days ahead: no partition yet, so the default partition takes it.
        const when = new Date(Date.now() + 20 * DAY);
        const e = invocationEvent({ event_time: when.toISOString() });
        assert.deepEqual(await send1([e]), { accepted: 1, duplicates: 0 });
        assert.deepEqual(await partitionOf(e.event_id), ['observability_events_default']);
        assert.deepEqual(await send1([e]), { accepted: 0, duplicates: 1 }, 'a retry the same day');
        // Days pass: the maintenance, run as of 15 days later, gives that day its partition and moves the row.
        const run = await maintainEventPartitions(db, svc.runtime.config, new Date(Date.now() + 15 * DAY));
        assert.ok(run.created >= 1);
        assert.deepEqual(await partitionOf(e.event_id), [
          `observability_events_p${utcDay(when).replaceAll('-', '')}`,
        ]);
        assert.deepEqual(await send1([e]), { accepted: 0, duplicates: 1 }, 'a retry days later');
        // An event of two days ago, resent after the maintenance has run on later days.
        const old = invocationEvent({ event_time: new Date(Date.now() - 2 * DAY).toISOString() });
        assert.deepEqual(await send1([old]), { accepted: 1, duplicates: 0 });
        await maintainEventPartitions(db, svc.runtime.config, new Date(Date.now() + 2 * DAY));
        assert.deepEqual(await send1([old, old]), { accepted: 0, duplicates: 2 });
        assert.equal((await partitionOf(old.event_id)).length, 1);
      });

      test('at midnight: each side in its own day, retries duplicates, in any spelling of the same instant', async () => {
        const midnight = Date.parse(`${utcDay(new Date(Date.now() + DAY))}T00:00:00Z`);
        const before = invocationEvent({ event_time: new Date(midnight - 1).toISOString() });
        const at = invocationEvent({ event_time: new Date(midnight).toISOString() });
        assert.deepEqual(await send1([before, at]), { accepted: 2, duplicates: 0 });
        assert.deepEqual(await partitionOf(before.event_id), [
          `observability_events_p${utcDay(new Date(midnight - 1)).replaceAll('-', '')}`,
        ]);
        assert.deepEqual(await partitionOf(at.event_id), [
          `observability_events_p${utcDay(new Date(midnight)).replaceAll('-', '')}`,
        ]);
        // The same instants written with an offset: 23:59:59.999Z is 01:59:59.999+02:00 on the next day's date.
        const local = (ms: number) => `${new Date(ms + 2 * 3_600_000).toISOString().slice(0, 23)}+02:00`;
        assert.deepEqual(
          await send1([
            { ...before, event_time: local(midnight - 1) },
            { ...at, event_time: local(midnight) },
            before,
          ]),
          { accepted: 0, duplicates: 3 },
        );
        assert.equal((await partitionOf(before.event_id)).length, 1);
        assert.equal((await partitionOf(at.event_id)).length, 1);
      });

      test('retention drops whole partitions past events.retention with an audit record; pages say where events stop', async () => {
        const config = svc.runtime.config;
        assert.equal(config.events.retention, 90 * DAY, 'the default');
        const now = new Date();
        const oldDay = utcDay(new Date(now.getTime() - 95 * DAY));
        const keptDay = utcDay(new Date(now.getTime() - 85 * DAY));
        const token = await svc.adminToken();
        const session = async (id: string, status = 200) => {
          const res = await svc.call('GET', `/v1/admin/observability/sessions/${id}`, { token });
          assert.equal(res.status, status, res.text);
          return res.body.data as {
            session: { calls: number; first_event_at: string };
            archived_before?: string;
            archive_location?: string | null;
          };
        };
        // A day past the window that held no event is dropped too, and lost nothing: no session read says otherwise.
        const emptyDay = utcDay(new Date(now.getTime() - 97 * DAY));
        await db.execute(sql`SELECT observability_events_add_partition(${emptyDay}::date)`);
        const emptyName = `observability_events_p${emptyDay.replaceAll('-', '')}`;
        assert.deepEqual(
          (await applyEventRetention(db, config, now)).dropped.map((d) => [d.name, d.rows]),
          [[emptyName, 0]],
        );
        for (const day of [oldDay, keptDay]) {
          await db.execute(sql`SELECT observability_events_add_partition(${day}::date)`);
        }
        // Sessions: one with events on both sides of the cutoff, one wholly past it.
        const at = (day: string, h: number, session_id = 'sess-span') =>
          invocationEvent({
            event_time: `${day}T${String(h).padStart(2, '0')}:00:00Z`,
            tool: 'retained',
            session_id,
          });
        const old = [at(oldDay, 1), at(oldDay, 12, 'sess-gone'), at(oldDay, 23)];
        assert.equal(await storedEarlier(old), 3);
        assert.deepEqual(await send1([at(keptDay, 5)]), { accepted: 1, duplicates: 0 });
        // Not folded yet: the day past the window stays until the rollups count its events.
        assert.deepEqual((await applyEventRetention(db, config, now)).dropped, [], 'kept while unfolded');
        // Nothing that held events was dropped: a session read has no notice, though its events reach past the window.
        const stored = await session('sess-span');
        assert.equal(stored.session.calls, 3);
        assert.equal(stored.archived_before, undefined);
        assert.equal(stored.archive_location, undefined);
        assert.equal((await session('sess-gone')).archived_before, undefined);
        await foldRollups(db);
        const rollupCalls = sql`SELECT coalesce(sum(calls), 0)::int AS n FROM observability_rollups
          WHERE grain = 'day' AND kind = 'call' AND tool = 'retained'`;
        assert.deepEqual(await queryRows(db, rollupCalls), [{ n: 4 }]);

        const run = await applyEventRetention(db, config, now);
        const oldName = `observability_events_p${oldDay.replaceAll('-', '')}`;
        assert.deepEqual(
          run.dropped.map((d) => [d.name, d.rows, d.from.slice(0, 10)]),
          [[oldName, 3, oldDay]],
          'only the partition wholly past the window',
        );
        assert.equal((await applyEventRetention(db, config, now)).dropped.length, 0, 'once');
        const names = (await listEventPartitions(db)).map((p) => p.name);
        assert.ok(!names.includes(oldName));
        assert.ok(names.includes(`observability_events_p${keptDay.replaceAll('-', '')}`));
        assert.deepEqual(await partitionOf(old[0]!.event_id), []);
        assert.deepEqual(await queryRows(db, rollupCalls), [{ n: 4 }], 'the rollups still count them');
        const audit = (
          await queryRows(
            db,
            sql`SELECT resource_id, metadata FROM audit_logs WHERE action_type = 'events.partition_dropped'
              AND resource_id <> ${emptyName}`,
          )
        ).map((r) => ({
          resource_id: r.resource_id,
          // jsonb arrives as text on the Data API.
          metadata: (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) as Record<
            string,
            unknown
          >,
        }));
        assert.equal(audit.length, 1);
        assert.equal(audit[0]?.resource_id, oldName);
        assert.deepEqual(
          [
            audit[0]?.metadata.rows,
            String(audit[0]?.metadata.from).slice(0, 10),
            audit[0]?.metadata.retention_days,
          ],
          [3, oldDay, 90],
        );
        assert.equal(
          Date.parse(String(audit[0]?.metadata.to)) - Date.parse(String(audit[0]?.metadata.from)),
          DAY,
        );

        // A page whose range reaches past the window says where the stored events stop; one inside it does not.
        const page = async (query: string) => {
          const res = await svc.call('GET', `/v1/admin/observability/events?tool=retained&${query}`, {
            token,
          });
          assert.equal(res.status, 200, res.text);
          return res.body.data as {
            events: unknown[];
            archived_before?: string;
            archive_location?: string | null;
          };
        };
        const past = await page(`from=${oldDay}T00:00:00Z&to=${keptDay}T23:00:00Z`);
        assert.equal(past.events.length, 1);
        assert.ok(past.archived_before, 'archived_before is given');
        assert.equal(past.archive_location, null, 'no archive configured: the older events were dropped');
        assert.ok(
          Math.abs(Date.parse(past.archived_before) - eventRetentionCutoff(config).getTime()) < 60_000,
        );
        const whole = await page('limit=10');
        assert.ok(whole.archived_before, 'the last page of a walk without from says it too');
        const inside = await page(`from=${keptDay}T00:00:00Z&to=${keptDay}T23:00:00Z`);
        assert.equal(inside.events.length, 1);
        assert.equal(inside.archived_before, undefined);
        assert.equal(inside.archive_location, undefined);
        // The filters say it too: their sampled values come from stored events.
        const filters = async (query: string) => {
          const res = await svc.call('GET', `/v1/admin/observability/filters?${query}`, { token });
          assert.equal(res.status, 200, res.text);
          return res.body.data as { archived_before?: string; archive_location?: string | null };
        };
        const pastFilters = await filters(`from=${oldDay}T00:00:00Z&to=${keptDay}T23:00:00Z`);
        assert.equal(pastFilters.archived_before, past.archived_before);
        assert.equal(pastFilters.archive_location, null);
        assert.equal(
          (await filters(`from=${keptDay}T00:00:00Z&to=${keptDay}T23:00:00Z`)).archived_before,
          undefined,
        );
        // A session whose earlier events were in the dropped day: its stored events, and the same notice.
        const span = await session('sess-span');
        assert.equal(span.session.calls, 1, 'the stored event only');
        assert.equal(span.session.first_event_at.slice(0, 10), keptDay);
        assert.equal(span.archived_before, past.archived_before);
        assert.equal(span.archive_location, null, 'no archive configured: the older events were dropped');
        // A session all of whose events were dropped: a 404 that says events before the cutoff are gone.
        const gone = await svc.call('GET', '/v1/admin/observability/sessions/sess-gone', { token });
        assert.equal(gone.status, 404, gone.text);
        assert.ok(
          gone.text.includes(`Events before ${past.archived_before} are no longer in the database`),
          gone.text,
        );
        assert.match(gone.text, /no archive is configured/);
      });

      test('rollup rows past events.rollup_retention are deleted; newer ones stay', async () => {
        const config = svc.runtime.config;
        assert.equal(config.events.rollup_retention, 400 * DAY, 'the default');
        const ancient = invocationEvent({
          event_time: new Date(Date.now() - 420 * DAY).toISOString(),
          tool: 'ancient_rollup',
        });
        assert.equal(await storedEarlier([ancient]), 1);
        await foldRollups(db);
        const rows = sql`SELECT count(*)::int AS n FROM observability_rollups WHERE tool = 'ancient_rollup'`;
        // The ancient event's series and totals rows (minute, hour and day): nothing else is that old.
        const series = (table: string) =>
          sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE bucket < ${new Date(Date.now() - 410 * DAY).toISOString()}::timestamptz`;
        const [before] = await queryRows(db, rows);
        assert.ok(Number(before?.n) > 0);
        for (const table of ['observability_series', 'observability_series_totals']) {
          assert.deepEqual(await queryRows(db, series(table)), [{ n: 3 }], table);
        }
        const run = await applyEventRetention(db, config);
        assert.ok(run.rollupRowsDeleted >= Number(before?.n) + 6);
        assert.deepEqual(await queryRows(db, rows), [{ n: 0 }]);
        for (const table of ['observability_series', 'observability_series_totals']) {
          assert.deepEqual(await queryRows(db, series(table)), [{ n: 0 }], table);
        }
        const [kept] = await queryRows(
          db,
          sql`SELECT count(*)::int AS n FROM observability_rollups WHERE tool = 'retained'`,
        );
        assert.ok(Number(kept?.n) > 0, 'rollups of 85 to 95 days ago stay');
      });

      if (driver !== 'pglite') {
        test('maintenance never fails a writer: a writer holding its device while a stray day gets its partition', async () => {
          // A past day within retention without a partition: its event waits in the default partition.
          const day = utcDay(new Date(Date.now() - 20 * DAY));
          const stray = invocationEvent({ event_time: `${day}T10:00:00.000Z`, tool: 'stray_tool' });
          assert.equal(await storedEarlier([stray]), 1);
          assert.deepEqual(await partitionOf(stray.event_id), ['observability_events_default']);
          const late = invocationEvent({ event_time: new Date().toISOString(), tool: 'late_tool' });
          let release!: () => void;
          let locked!: () => void;
          const deviceLocked = new Promise<void>((resolve) => {
            locked = resolve;
          });
          // As ingest does: the device first, then its events, in one transaction.
          const writer = db.transaction(async (tx) => {
            await tx.execute(sql`UPDATE devices SET last_seen_at = now()`);
            locked();
            await new Promise<void>((resolve) => {
              release = resolve;
            });
            await tx.execute(
              sql`INSERT INTO observability_events (device_id, serial_number, event_time, event_id, agent_type,
                  mcp_name, tool, event_type, result)
                SELECT id, serial_number, ${late.event_time}::timestamptz, ${late.event_id}::uuid, 'a', 'm',
                  'late_tool', 'invocation', 'allowed' FROM devices LIMIT 1`,
            );
          });
          await deviceLocked;
          const maintenance = maintainEventPartitions(db, svc.runtime.config);
          // Once maintenance waits for a lock, the writer goes on to its events.
          for (let i = 0; i < 200; i++) {
            const [row] = await queryRows(
              db,
              sql`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted) AS waiting`,
            );
            if (row?.waiting) break;
            await new Promise((r) => setTimeout(r, 10));
          }
          release();
          const [wrote, maintained] = await Promise.allSettled([writer, maintenance]);
          assert.equal(wrote.status, 'fulfilled', String((wrote as PromiseRejectedResult).reason));
          assert.equal(maintained.status, 'fulfilled', String((maintained as PromiseRejectedResult).reason));
          assert.equal((await partitionOf(late.event_id)).length, 1, "the writer's event is stored");
          // The next run makes the day and moves its stray event there.
          await maintainEventPartitions(db, svc.runtime.config);
          assert.deepEqual(await partitionOf(stray.event_id), [
            `observability_events_p${day.replaceAll('-', '')}`,
          ]);
        });
      }

      test('an event far ahead lands in the default partition and is listed like any other; one past the window is refused', async () => {
        const when = new Date(Date.now() + 400 * DAY);
        const e = invocationEvent({ event_time: when.toISOString(), tool: 'distant_tool' });
        assert.deepEqual(await send1([e]), { accepted: 1, duplicates: 0 });
        assert.deepEqual(await partitionOf(e.event_id), ['observability_events_default']);
        const token = await svc.adminToken();
        const from = new Date(when.getTime() - DAY).toISOString();
        const to = new Date(when.getTime() + DAY).toISOString();
        const page = await svc.call(
          'GET',
          `/v1/admin/observability/events?tool=distant_tool&from=${from}&to=${to}`,
          {
            token,
          },
        );
        assert.equal(page.status, 200, page.text);
        const items = (page.body.data as { events: Array<{ event_id: string }> }).events as Array<{
          event_id: string;
        }>;
        assert.deepEqual(
          items.map((i) => i.event_id),
          [e.event_id],
        );
        const run = await maintainEventPartitions(db, svc.runtime.config);
        assert.ok(run.stray >= 1, 'outside the drain window it stays in the default partition');
        // An event older than the window would sit in the default partition, never archived: it is refused.
        const identity = await createDeviceIdentity('p256');
        await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        const ancient = invocationEvent({ event_time: '2001-02-03T04:05:06Z', tool: 'ancient_tool' });
        const res = await send(svc.url, prepare('/v1/devices/events', identity, { events: [ancient] }));
        assert.deepEqual([res.status, res.body.error], [400, 'event_too_old']);
        assert.deepEqual(await partitionOf(ancient.event_id), []);
      });
    });
  });
}
