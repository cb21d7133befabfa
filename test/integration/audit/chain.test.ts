// The audit chain is defined on what is stored, on every driver: records of random Unicode text, free-form metadata
// and timestamps anywhere in the chain's range (its edges included, in any zone offset, with digits past the
// millisecond) go in through the log shipper's ingest, are read back exactly as they were sent (the timestamp as
// its instant in UTC, to the millisecond), and verify. Timestamps outside the range are refused naming the field
// (0002-01-01 was stored, read back as 2001-02-01, and broke the chain for good), and a broken chain names its first
// bad record. AUDIT_SEED replays a run (default a fixed seed; `random` explores), AUDIT_RUNS sets the number of runs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { runs } from '#test/support/runs.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const SHIPPER_TOKEN = 'log-shipper-token-for-the-chain-0123456789';
const RUNS = runs(25, { variable: 'AUDIT_RUNS' });
const SEED =
  process.env.AUDIT_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.AUDIT_SEED ?? 20261127);

const FIRST = Date.UTC(1970, 0, 1);
const LAST = Date.UTC(10_000, 0, 1) - 1;

/**
 * PGlite reads a text value that begins with U+FEFF without it (its protocol reader decodes each value with a
 * TextDecoder that takes a leading U+FEFF for a byte order mark; stored, the value is whole). Only there, and only
 * at the start of a value, no generated text has one (docs/operations.md, "Audit log chain").
 */
const leadingBomLost = (driver: string) => driver === 'pglite';

/** Text the API takes: any Unicode but U+0000 (refused everywhere: PostgreSQL cannot hold it). */
const text = (maxLength: number, driver: string) =>
  fc
    .oneof(
      fc.string({ unit: 'grapheme', maxLength }),
      fc.string({ unit: 'binary', maxLength }),
      fc.constantFrom(
        '',
        'é',
        'e\u0301',
        '\ufffd',
        'a\ufeff',
        '\ufeff',
        '😀',
        '\u{10ffff}',
        '\u2028',
        '"\\/',
        '\r\n\t',
      ),
    )
    // At most 100 UTF-16 units: within every field's bound (ip_address), however long its graphemes.
    .filter(
      (s) => !s.includes('\u0000') && s.length <= 100 && !(leadingBomLost(driver) && s.startsWith('\ufeff')),
    );

const metadata = (driver: string) =>
  fc
    .dictionary(text(12, driver), fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }), { maxKeys: 5 })
    .filter((m) => {
      const json = JSON.stringify(m);
      return !json.includes('\\u0000') && !(leadingBomLost(driver) && json.includes('"\ufeff'));
    });

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An instant of the range (its edges weighted), written in a zone offset, with 0, 3, 6 or 9 fraction digits. */
const timestamp = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.integer({ min: FIRST, max: LAST }), weight: 4 },
      { arbitrary: fc.constantFrom(FIRST, FIRST + 1, LAST, LAST - 999, Date.UTC(2000, 1, 29)), weight: 1 },
    ),
    fc.integer({ min: -(15 * 60 + 59), max: 15 * 60 + 59 }),
    fc.constantFrom(0, 3, 6, 9),
    fc.integer({ min: 0, max: 999_999 }),
  )
  .map(([instant, offsetMinutes, digits, finer]) => {
    const local = new Date(instant + offsetMinutes * 60_000);
    // A local time outside four-digit years has no RFC 3339 form: that one is written in UTC.
    const offset = local.getUTCFullYear() > 9999 || local.getUTCFullYear() < 1 ? 0 : offsetMinutes;
    const at = new Date(instant + offset * 60_000);
    const ms = digits === 0 ? 0 : instant % 1000;
    const instantMs = instant - (instant % 1000) + ms;
    const fraction = digits === 0 ? '' : `.${pad(ms, 3)}${pad(finer, 6).slice(0, digits - 3)}`;
    const zone =
      offset === 0 && offsetMinutes % 2 === 0
        ? 'Z'
        : `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
    const wall = `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}T${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}`;
    return { sent: `${wall}${fraction}${zone}`, stored: new Date(instantMs).toISOString() };
  });

const record = (driver: string) =>
  fc.record({
    action_type: text(40, driver).filter((s) => s.length > 0),
    timestamp,
    actor_email: text(40, driver),
    actor_id: text(20, driver),
    app_name: text(20, driver),
    container_id: text(20, driver),
    environment_id: text(20, driver),
    environment_name: text(20, driver),
    ip_address: text(20, driver),
    level: fc.constantFrom('info', 'warn', 'error'),
    resource_type: text(20, driver),
    stage: text(20, driver),
    metadata: metadata(driver),
  });

interface Stored {
  id: string;
  timestamp: string;
  metadata: Record<string, unknown>;
  [field: string]: unknown;
}

for (const driver of driversUnderTest()) {
  describe(`the audit chain on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    before(async () => {
      svc = await startTestService(driver, { audit: { ingest_token: SHIPPER_TOKEN } });
      admin = await svc.adminToken();
    });
    after(async () => svc?.dispose());

    const ingest = (records: unknown[]) =>
      svc.call('POST', '/v1/admin/audit-logs', { token: SHIPPER_TOKEN, body: { records } });
    const verify = async () => {
      const res = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal(res.status, 200, res.text);
      return res.body.data as {
        intact: boolean;
        checked: number;
        broken_at: { id: string; seq: number; reason: string } | null;
      };
    };
    const storedUnder = async (resourceId: string) => {
      const res = await svc.call(
        'GET',
        `/v1/admin/audit-logs?resource_id=${encodeURIComponent(resourceId)}&sort=created_at&limit=100`,
        { token: admin },
      );
      assert.equal(res.status, 200, res.text);
      return (res.body.data as { logs: Stored[] }).logs;
    };

    test(`${RUNS} batches of random records: read back as sent, and the chain verifies after each`, {
      timeout: 600_000,
    }, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(record(driver), { minLength: 1, maxLength: 4 }), async (batch) => {
          const resourceId = randomUUID();
          const sent = batch.map((r) => ({ ...r, timestamp: r.timestamp.sent, resource_id: resourceId }));
          const res = await ingest(sent);
          assert.equal(res.status, 201, res.text);
          const logs = await storedUnder(resourceId);
          assert.deepEqual(
            (res.body.data as { ids: string[] }).ids,
            logs.map((l) => l.id),
          );
          for (const [i, r] of batch.entries()) {
            const { timestamp: _sent, metadata: m, ...fields } = sent[i] as (typeof sent)[number];
            const log = logs[i] as Stored;
            for (const [name, value] of Object.entries(fields)) assert.equal(log[name], value, name);
            assert.equal(log.timestamp, r.timestamp.stored, `timestamp ${r.timestamp.sent}`);
            assert.deepEqual(log.metadata, {
              ...JSON.parse(JSON.stringify(m)),
              ingested_by: 'service-token:audit.ingest_token',
            });
            assert.equal(log.source, 'logshipper');
          }
          const chain = await verify();
          assert.equal(chain.intact, true, JSON.stringify(chain.broken_at));
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });

    test('timestamps outside 1970..9999 (UTC), or without a zone, are 400 naming the field; nothing is stored', async () => {
      const count = async () =>
        (await queryRows(svc.runtime.database.db, sql`SELECT count(*)::int AS n FROM audit_logs`))[0]?.n;
      const before = await count();
      for (const refused of [
        '0002-01-01T00:00:00Z',
        '1969-12-31T23:59:59.999Z',
        '1970-01-01T00:59:59+01:00',
        '9999-12-31T20:00:00-04:00',
        '0001-01-01T00:00:00Z',
        '2026-01-15T09:30:00',
      ]) {
        const res = await ingest([{ action_type: 'edge', timestamp: refused }]);
        assert.equal(res.status, 400, refused);
        assert.match(String(res.body.message), /body\.records\[0\]\.timestamp: /, refused);
      }
      assert.equal(await count(), before, 'a refused batch stores nothing');
      const resourceId = randomUUID();
      const edges = [
        ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
        ['1970-01-01T01:00:00+01:00', '1970-01-01T00:00:00.000Z'],
        ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
        ['9999-12-31T19:59:59.999999999-04:00', '9999-12-31T23:59:59.999Z'],
      ];
      const res = await ingest(
        edges.map(([t]) => ({ action_type: 'edge', timestamp: t, resource_id: resourceId })),
      );
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(
        (await storedUnder(resourceId)).map((l) => l.timestamp),
        edges.map(([, stored]) => stored),
      );
      assert.equal((await verify()).intact, true);
    });

    test('since=verified walks on from the last intact walk, and from the first record when the chain lost that point', async () => {
      type Point = { seq: number; hash: string; created_at: string };
      type Verified = {
        intact: boolean;
        checked: number;
        head: Point | null;
        broken_at: { id: string; seq: number; reason: string } | null;
        verified_from: { seq: number; count: number; verified_at: string } | null;
      };
      const since = async () => {
        const res = await svc.call('GET', '/v1/admin/audit-logs/verify?since=verified', { token: admin });
        assert.equal(res.status, 200, res.text);
        return res.body.data as Verified;
      };
      const full = async () => (await verify()) as Verified;
      const resourceId = randomUUID();
      const add = async (actions: string[]) =>
        assert.equal(
          (
            await ingest(
              actions.map((action_type) => ({
                action_type,
                timestamp: '2026-01-15T09:30:00Z',
                resource_id: resourceId,
              })),
            )
          ).status,
          201,
        );
      await add(['before']);
      const first = await full();
      assert.ok(first.intact && first.head);
      await add(['a', 'b', 'c']);
      const onward = await since();
      assert.deepEqual(
        onward.verified_from && { seq: onward.verified_from.seq, count: onward.verified_from.count },
        {
          seq: first.head.seq,
          count: first.checked,
        },
      );
      const whole = await full();
      assert.equal(onward.intact, true);
      assert.equal(onward.checked, whole.checked - first.checked);
      assert.deepEqual(onward.head, whole.head);
      // Nothing new: nothing hashed, the head is the stored point.
      const again = await since();
      assert.equal(again.checked, 0);
      assert.deepEqual(again.head, whole.head);
      assert.equal(again.verified_from?.seq, whole.head?.seq);
      const db = svc.runtime.database.db;
      const behindTheService = (statement: ReturnType<typeof sql>) =>
        db.transaction(async (tx) => {
          await tx.execute(sql`SET LOCAL session_replication_role = replica`);
          await tx.execute(statement);
        });
      // A record changed after the point: found, the head stays the point.
      await add(['d', 'e']);
      const [changed] = (await queryRows(
        db,
        sql`SELECT id::text AS id, seq::int AS seq FROM audit_logs WHERE resource_id = ${resourceId} AND action_type = 'd'`,
      )) as [{ id: string; seq: number }];
      await behindTheService(sql`UPDATE audit_logs SET stage = 'rewritten' WHERE id = ${changed.id}::uuid`);
      const broken = await since();
      assert.equal(broken.intact, false);
      assert.deepEqual(broken.broken_at && { seq: broken.broken_at.seq, reason: broken.broken_at.reason }, {
        seq: changed.seq,
        reason: 'content',
      });
      assert.deepEqual(broken.head, whole.head);
      await behindTheService(sql`UPDATE audit_logs SET stage = '' WHERE id = ${changed.id}::uuid`);
      // The point's own record rewritten (its hash too): the point is not used, the walk from the first record
      // finds the change.
      // The walk that passed the restored record stored its head as the point.
      const point = (await since()).head;
      assert.ok(point);
      const [kept] = (await queryRows(db, sql`SELECT hash FROM audit_logs WHERE seq = ${point.seq}`)) as [
        { hash: string },
      ];
      await behindTheService(
        sql`UPDATE audit_logs SET stage = 'rewritten', hash = md5(hash) WHERE seq = ${point.seq}`,
      );
      const lost = await since();
      assert.equal(lost.verified_from, null);
      assert.equal(lost.intact, false);
      assert.equal(lost.broken_at?.seq, point.seq);
      assert.deepEqual((await full()).broken_at, lost.broken_at);
      await behindTheService(
        sql`UPDATE audit_logs SET stage = '', hash = ${kept.hash} WHERE seq = ${point.seq}`,
      );
      assert.equal((await since()).intact, true, 'restored, it verifies again');
      const refused = await svc.call('GET', '/v1/admin/audit-logs/verify?since=verified&at_seq=1', {
        token: admin,
      });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /at_seq/);
    });

    test('a broken chain names its first bad record: a changed one (content), then a removed one (link)', async () => {
      const resourceId = randomUUID();
      const res = await ingest(
        ['a', 'b', 'c', 'd'].map((action) => ({
          action_type: action,
          timestamp: '2026-01-15T09:30:00Z',
          resource_id: resourceId,
        })),
      );
      assert.equal(res.status, 201, res.text);
      const db = svc.runtime.database.db;
      const rows = await queryRows(
        db,
        sql`SELECT id::text AS id, seq::int AS seq FROM audit_logs WHERE resource_id = ${resourceId} ORDER BY seq`,
      );
      const [, changed, , last] = rows as [
        unknown,
        { id: string; seq: number },
        unknown,
        { id: string; seq: number },
      ];
      // What someone with the database's credentials could do: pass the append-only trigger, rewrite, delete.
      const behindTheService = (statement: ReturnType<typeof sql>) =>
        db.transaction(async (tx) => {
          await tx.execute(sql`SET LOCAL session_replication_role = replica`);
          await tx.execute(statement);
        });
      await behindTheService(sql`UPDATE audit_logs SET stage = 'rewritten' WHERE id = ${changed.id}::uuid`);
      assert.deepEqual((await verify()).broken_at, {
        id: changed.id,
        seq: changed.seq,
        timestamp: '2026-01-15T09:30:00.000Z',
        reason: 'content',
      });
      await behindTheService(sql`UPDATE audit_logs SET stage = '' WHERE id = ${changed.id}::uuid`);
      assert.equal((await verify()).intact, true, 'restored, it verifies again');
      await behindTheService(sql`DELETE FROM audit_logs WHERE seq = ${last.seq - 1}`);
      const broken = await verify();
      assert.equal(broken.intact, false);
      assert.deepEqual(broken.broken_at, {
        id: last.id,
        seq: last.seq,
        timestamp: '2026-01-15T09:30:00.000Z',
        reason: 'link',
      });
    });
  });
}
