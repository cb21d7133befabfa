// 20 agents send batches at once on a real PostgreSQL, and retry some of them (re-signed, same event_ids, as the
// protocol tells a retrying agent to): afterwards stored events = distinct event_ids sent; none lost, none doubled.
// The rollup fold (shared/observability/rollups/rollups.ts) running meanwhile counts each of them exactly once, and
// an ingest transaction still open holds the fold back below it instead of letting its events be skipped.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createDeviceIdentity } from '#agent/identity.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { fingerprintOf } from '#shared/devices/signing/certificate.ts';
import { type FoldResult, foldRollups } from '#shared/observability/rollups/rollups.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { hardware, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { assertRollupsEqualRecomputation } from '#test/support/rollups.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

describe('concurrent ingest on postgres', () => {
  // Needs a server with real concurrency: runs whenever the postgres driver does (always in npm test).
  if (!driversUnderTest().includes('postgres')) return;
  let svc: TestService;
  before(async () => {
    // Registering needs a dashboard URL (without one no new device can register): set it here whatever the
    // config file says.
    svc = await startTestService('postgres', { dashboard_url: 'http://dashboard.test' });
  });
  after(async () => svc?.dispose());

  test('20 agents, 5 batches of 100 each, 2 batches of each retried concurrently', async () => {
    const token = await svc.adminToken();
    const agents = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const identity = await createDeviceIdentity(i % 2 ? 'ed25519' : 'p256');
        const res = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        assert.equal(res.status, 201);
        const batches = Array.from({ length: 5 }, () => Array.from({ length: 100 }, () => invocationEvent()));
        return { identity, batches };
      }),
    );
    const sends = agents.flatMap(({ identity, batches }) => [
      ...batches.map((events) => ({ identity, events })),
      { identity, events: batches[0] as unknown[] },
      { identity, events: batches[3] as unknown[] },
    ]);
    // Folds and admin summary reads (which add the events not folded yet) all the while, on other connections.
    let sending = true;
    let folds = 0;
    const folding = (async () => {
      while (sending) {
        await foldRollups(svc.runtime.database.db);
        const summary = await svc.call('GET', '/v1/admin/observability/summary', { token });
        assert.equal(summary.status, 200);
        folds++;
      }
    })();
    const results = await Promise.all(
      sends.map(({ identity, events }) => send(svc.url, prepare('/v1/devices/events', identity, { events }))),
    ).finally(() => {
      sending = false;
    });
    await folding;
    assert.ok(folds > 0);
    assert.ok(
      results.every((r) => r.status === 200),
      JSON.stringify(results.find((r) => r.status !== 200)),
    );
    const accepted = results.reduce((n, r) => n + Number(r.body.accepted), 0);
    const duplicates = results.reduce((n, r) => n + Number(r.body.duplicates), 0);
    const [row] = await queryRows(
      svc.runtime.database.db,
      sql`SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct_ids FROM observability_events`,
    );
    assert.equal(row?.total, 20 * 5 * 100);
    assert.equal(row?.distinct_ids, 20 * 5 * 100);
    assert.equal(accepted, 10_000);
    assert.equal(duplicates, 20 * 2 * 100);
    await assertRollupsEqualRecomputation(svc.runtime.database.db);
  });

  test('an open transaction delays only its own events: the fold passes it, then folds them once it commits', async () => {
    const db = svc.runtime.database.db;
    const token = await svc.adminToken();
    // The summary's calls (rollups and the tail of events not folded yet) = the events stored in its range.
    const assertReadCountsStored = async () => {
      const from = new Date(Date.now() - 2 * 86_400_000).toISOString();
      const res = await svc.call('GET', `/v1/admin/observability/summary?from=${from}`, { token });
      assert.equal(res.status, 200);
      const body = res.body.data as { range: { from: string; to: string }; totals: { calls: number } };
      const [stored] = await queryRows(
        db,
        sql`SELECT count(*)::int AS n FROM observability_events
          WHERE event_time >= ${body.range.from}::timestamptz AND event_time < ${body.range.to}::timestamptz`,
      );
      assert.equal(body.totals.calls, stored?.n);
    };
    // Two devices: batches of one device queue on its row (last_seen_at), those of two devices do not.
    const [identity, other] = await Promise.all([
      createDeviceIdentity('p256'),
      createDeviceIdentity('ed25519'),
    ]);
    for (const device of [identity, other]) {
      const res = await send(svc.url, prepare('/v1/devices/register', device, hardware(), { token }));
      assert.equal(res.status, 201);
    }
    await assertRollupsEqualRecomputation(db);
    // A: the ingest statement in a transaction left open (a batch still being written), its xid the older one.
    // Idle: a transaction with an xid that writes no event, open throughout (a long report, a migration).
    const a = new pg.Client({ connectionString: svc.runtime.config.db.dsn });
    const idle = new pg.Client({ connectionString: svc.runtime.config.db.dsn });
    await Promise.all([a.connect(), idle.connect()]);
    try {
      await idle.query('BEGIN');
      await idle.query('SELECT pg_current_xact_id()');
      await a.query('BEGIN');
      const now = new Date();
      const opened = await a.query('SELECT inserted FROM ingest_events($1, $2, $3, $3, $4, $5, $6::json)', [
        fingerprintOf(identity.certificatePem),
        '198.51.100.9',
        now,
        randomUUID(),
        new Date(now.getTime() + 600_000),
        JSON.stringify(
          Array.from({ length: 7 }, () =>
            invocationEvent({
              event_id: randomUUID(),
              tokens_in: 10,
              tokens_out: 20,
              duration_ms: 30,
              prompt_truncated: false,
            }),
          ),
        ),
      ]);
      assert.equal(opened.rows[0]?.inserted, 7);
      // B: a batch of another device through the API, committed after A began.
      const sent = await send(
        svc.url,
        prepare('/v1/devices/events', other, {
          events: Array.from({ length: 5 }, () => invocationEvent()),
        }),
      );
      assert.equal(sent.status, 200);
      // B's events are folded although A (older) and the idle transaction are still open; A's are not visible yet.
      assert.equal((await foldRollups(db)).folded, 5);
      assert.equal((await foldRollups(db)).folded, 0);
      await assertReadCountsStored();
      await a.query('COMMIT');
      // Before a fold sees them, a read counts A's events: its xid is pending, in the tail the read adds.
      await assertReadCountsStored();
      // A's events, once it has committed: its xid was kept pending, below the watermark.
      assert.equal((await foldRollups(db)).folded, 7);
      assert.equal((await foldRollups(db)).folded, 0);
      await assertRollupsEqualRecomputation(db);
      // A transaction that aborts leaves nothing behind, and its xid leaves the pending list.
      await a.query('BEGIN');
      await a.query('SELECT inserted FROM ingest_events($1, $2, $3, $3, $4, $5, $6::json)', [
        fingerprintOf(identity.certificatePem),
        '198.51.100.9',
        new Date(),
        randomUUID(),
        new Date(Date.now() + 600_000),
        JSON.stringify([
          invocationEvent({
            event_id: randomUUID(),
            tokens_in: 1,
            tokens_out: 2,
            duration_ms: 3,
            prompt_truncated: false,
          }),
        ]),
      ]);
      await send(
        svc.url,
        prepare('/v1/devices/events', other, { events: Array.from({ length: 3 }, () => invocationEvent()) }),
      );
      assert.equal((await foldRollups(db)).folded, 3);
      await a.query('ROLLBACK');
      await idle.query('COMMIT');
      assert.equal((await foldRollups(db)).folded, 0);
    } finally {
      await Promise.all([a.end(), idle.end()]);
    }
    // The next fold with something to fold drops the finished transactions from the pending list (a read that finds
    // nothing to fold writes nothing).
    await send(svc.url, prepare('/v1/devices/events', other, { events: [invocationEvent()] }));
    assert.equal((await foldRollups(db)).folded, 1);
    const [state] = await queryRows(
      db,
      sql`SELECT pending_xids::text[] AS pending FROM observability_fold_state`,
    );
    assert.deepEqual(state?.pending, []);
    await assertRollupsEqualRecomputation(db);
  });

  test('a read never waits for a fold in progress; the scheduled fold waits, then folds what is left', async () => {
    const db = svc.runtime.database.db;
    const token = await svc.adminToken();
    const identity = await createDeviceIdentity('p256');
    const reg = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
    assert.equal(reg.status, 201);
    await foldRollups(db);
    const settled = <T>(p: Promise<T>, ms: number) =>
      Promise.race([p.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), ms))]);
    // Another session holds the watermark, as a long fold would.
    const holdWatermark = async () => {
      const folder = new pg.Client({ connectionString: svc.runtime.config.db.dsn });
      await folder.connect();
      await folder.query('BEGIN');
      await folder.query('SELECT next_xid FROM observability_fold_state FOR UPDATE');
      return {
        release: async () => {
          await folder.query('COMMIT');
          await folder.end();
        },
      };
    };
    // Nothing pending: the read's fold answers at once, without the lock.
    let holder = await holdWatermark();
    try {
      assert.equal(await settled(foldRollups(db), 2000), true);
      const summary = await svc.call('GET', '/v1/admin/observability/summary', { token });
      assert.equal(summary.status, 200);
    } finally {
      await holder.release();
    }
    // Something pending: the read's fold leaves it to the fold in progress and returns at once (the read answers from
    // what is folded); a scheduled fold (wait) waits for that fold, then folds it.
    const sent = await send(
      svc.url,
      prepare('/v1/devices/events', identity, { events: Array.from({ length: 4 }, () => invocationEvent()) }),
    );
    assert.equal(sent.status, 200);
    holder = await holdWatermark();
    let waiting: Promise<FoldResult> | undefined;
    try {
      const read = foldRollups(db);
      assert.equal(await settled(read, 2000), true);
      assert.deepEqual(await read, { folded: 0, more: true });
      const summary = await svc.call('GET', '/v1/admin/observability/summary', { token });
      assert.equal(summary.status, 200);
      waiting = foldRollups(db, { wait: true });
      assert.equal(await settled(waiting, 300), false);
    } finally {
      await holder.release();
    }
    assert.equal((await waiting)?.folded, 4);
    await assertRollupsEqualRecomputation(db);
  });
});
