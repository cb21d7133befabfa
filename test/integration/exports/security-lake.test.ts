// The Amazon Security Lake destination end to end, on every driver (docs/exports.md): made through the admin API,
// driven by the scheduled delivery, its objects read back from s3rver with DuckDB (a second Parquet reader) in the
// custom-source layout. Covered: settings refused naming the field; every stored event lands once as API Activity;
// the lake down (connections refused) builds lag, and delivery resumes from the cursor when it is back; a replay
// fills an emptied lake again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { s3ClientFor } from '#shared/core/object-store/s3-client.ts';
import { useAwsKeys } from '#test/support/aws-keys.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { freePort } from '#test/support/free-port.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import { runScheduleUntil, startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
const BUCKET = 'aws-security-data-lake-eu-west-1-acptest';
const SOURCE = 'acp_api_activity';
const PARTITION = `ext/${SOURCE}/region=eu-west-1/accountId=123456789012/`;

for (const driver of driversUnderTest()) {
  describe(`Security Lake destination on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let device: Awaited<ReturnType<typeof enrolledDevice>>;
    let s3: S3Server | undefined;
    let client: S3Client;
    let duck: DuckDBInstance;
    let connection: DuckDBConnection;
    let id = '';
    const ingested: string[] = [];
    const port = { value: 0 };
    const dirs = { lake: '', reads: '' };
    let restoreKeys = () => {};

    const startLake = async () => {
      s3 = await startS3Server(BUCKET, { port: port.value, directory: dirs.lake });
    };

    before(async () => {
      // s3rver's key pair, for the deliver pass's client too, also while the lake is down.
      restoreKeys = useAwsKeys('S3RVER', 'S3RVER');
      dirs.lake = mkdtempSync(join(tmpdir(), 'acp-lake-'));
      dirs.reads = mkdtempSync(join(tmpdir(), 'acp-lake-reads-'));
      port.value = await freePort();
      await startLake();
      client = s3ClientFor({ endpoint: `http://127.0.0.1:${port.value}`, region: 'eu-west-1' });
      duck = await DuckDBInstance.create(':memory:');
      connection = await duck.connect();
      svc = await startTestService(driver, {
        dashboard_url: 'http://dashboard.test',
        exports: {
          batch: 25,
          backoff: '200ms',
          max_backoff: '2s',
          timeout: '2s',
          security_lake_endpoint: `http://127.0.0.1:${port.value}`,
        },
      });
      admin = await svc.adminToken();
      device = await enrolledDevice(svc.url, admin);
    });
    after(async () => {
      await svc?.dispose();
      connection?.closeSync();
      duck?.closeSync();
      client?.destroy();
      await s3?.close();
      for (const dir of Object.values(dirs)) if (dir) rmSync(dir, { recursive: true, force: true });
      restoreKeys();
    });

    const api = (method: string, path: string, body?: unknown) =>
      svc.call(method, `/v1/admin/exports/destinations${path}`, { token: admin, body });
    const status = async () => {
      const res = await api('GET', `/${id}`);
      assert.equal(res.status, 200, res.text);
      return (res.body.data as Json).status as Json;
    };
    /** Runs delivery passes until `done` holds. */
    const passUntil = (done: () => Promise<boolean>, what: string) =>
      runScheduleUntil(svc, 'exportDelivery', done, what);
    const caughtUp = () =>
      passUntil(async () => (await status()).lag_events === 0, 'delivery did not catch up');

    /** Stores `n` tool calls (every other one denied) and remembers their ids. */
    const ingest = async (n: number) => {
      const events = Array.from({ length: n }, (_, i) => ({
        event_id: randomUUID(),
        event_time: new Date(Date.now() - 30_000 + i).toISOString(),
        agent_type: 'cursor',
        mcp_name: 'jira',
        tool: `search_${i % 3}`,
        event_type: 'invocation',
        result: i % 2 === 0 ? 'allowed' : 'denied',
        ...(i % 2 === 1 ? { deny_code: 'blocked', rule_applied: 'r7@2', deny_reason: 'off hours' } : {}),
        duration_ms: 5 * i,
      }));
      const res = await send(svc.url, prepare('/v1/devices/events', device, { events }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const stored = await svc.call('GET', `/v1/admin/observability/events?limit=${n}`, { token: admin });
      assert.equal(stored.status, 200);
      ingested.push(...((stored.body.data as Json).events as Json[]).map((e) => String(e.id)));
    };

    const lakeKeys = async (): Promise<string[]> => {
      const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
      return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
    };
    /** Every row the lake holds, read by DuckDB from the objects as downloaded. */
    const lakeRows = async (): Promise<Json[]> => {
      const rows: Json[] = [];
      for (const key of await lakeKeys()) {
        const body = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        const file = join(dirs.reads, `${randomUUID()}.parquet`);
        writeFileSync(file, await (body.Body?.transformToByteArray() ?? new Uint8Array()));
        const read = await connection.runAndReadAll(
          `SELECT class_uid, activity_id, metadata.uid AS uid, api.operation AS operation,
             action_id, time FROM read_parquet('${file}')`,
        );
        rows.push(...(read.getRowObjectsJson() as Json[]));
      }
      return rows;
    };

    test('admin API: a security_lake destination is made, its bad settings named', async () => {
      const settings = {
        bucket: BUCKET,
        region: 'eu-west-1',
        account_id: '123456789012',
        sources: { apiActivity: SOURCE },
      };
      for (const [bad, message] of [
        [{ ...settings, region: 'mars' }, /^body\.settings\.region: /],
        [{ ...settings, account_id: '12345' }, /^body\.settings\.account_id: /],
        [
          { ...settings, sources: { apiActivity: 'a_source_name_over_20' } },
          /^body\.settings\.sources\.apiActivity: /,
        ],
        [{ ...settings, sources: {} }, /^body\.settings\.sources\.apiActivity: /],
        [{ ...settings, bucket: 'Not_A_Bucket' }, /^body\.settings\.bucket: /],
        // The writes are signed with the function's own credentials: where they go is the operator's config.
        [{ ...settings, endpoint: 'https://collector.attacker.example' }, /^body\.settings: .*"endpoint"/],
      ] as const) {
        const res = await api('POST', '', { kind: 'security_lake', name: 'lake', settings: bad });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error, 'validation_failed', res.text);
        assert.match(String(res.body.message), message, res.text);
      }
      const secret = await api('POST', '', {
        kind: 'security_lake',
        name: 'lake',
        settings,
        secret_ref: 'x',
      });
      assert.equal(secret.status, 400, secret.text);
      assert.match(String(secret.body.message), /^body\.secret_ref: is not taken by security_lake/);
      const made = await api('POST', '', { kind: 'security_lake', name: 'lake', settings });
      assert.equal(made.status, 200, made.text);
      id = String((made.body.data as Json).id);
      assert.equal((made.body.data as Json).kind, 'security_lake');
      assert.deepEqual((made.body.data as Json).settings, settings);
    });

    test('the scheduled delivery writes every event once, as API Activity, in the custom-source layout', async () => {
      await ingest(40);
      await caughtUp();
      const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
      const keys = await lakeKeys();
      assert.ok(keys.length > 0);
      for (const key of keys) {
        assert.match(key, new RegExp(`^${PARTITION}eventDay=\\d{8}/[0-9a-f]{32}\\.parquet$`), key);
      }
      assert.ok(keys.some((k) => k.includes(`/eventDay=${day}/`)));
      const rows = await lakeRows();
      assert.deepEqual(rows.map((r) => String(r.uid)).sort(), [...ingested].sort());
      assert.ok(rows.every((r) => Number(r.class_uid) === 6003 && Number(r.activity_id) === 99));
      assert.ok(rows.every((r) => r.operation === 'tools/call'));
      assert.equal(rows.filter((r) => Number(r.action_id) === 2).length, 20, 'the denied calls');
      const s = await status();
      assert.match(String(s.cursor), /^\d+:\d+$/);
      assert.equal(s.delivered, 40);
      assert.equal(s.last_error, null);
    });

    test('the lake down builds lag and loses nothing: delivery resumes from the cursor', async () => {
      await s3?.close();
      s3 = undefined;
      const before = ingested.length;
      let down: Json;
      try {
        await ingest(10);
        await passUntil(async () => (await status()).last_error !== null, 'the lake never failed');
        down = await status();
      } finally {
        await startLake();
      }
      assert.equal(down.lag_events, 10);
      assert.equal(down.last_error, 'S3 unreachable (ECONNREFUSED)');
      assert.equal(down.last_error_permanent, false);
      assert.ok(Number(down.attempts) >= 1);
      await sleep(Math.max(0, Date.parse(String(down.next_attempt_at)) - Date.now()) + 100);
      await caughtUp();
      const uids = new Set((await lakeRows()).map((r) => String(r.uid)));
      assert.ok(
        ingested.slice(before).every((e) => uids.has(e)),
        'the events stored while the lake was down',
      );
      assert.equal(uids.size, ingested.length);
      assert.equal((await status()).last_error, null);
    });

    test('a replay sends the range again: an emptied lake is filled again', async () => {
      const keys = await lakeKeys();
      await client.send(
        new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.map((Key) => ({ Key })) } }),
      );
      assert.deepEqual(await lakeKeys(), []);
      const res = await api('POST', `/${id}/replay`, {
        from: new Date(Date.now() - 86_400_000).toISOString(),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.body.data as Json).replayed, ingested.length);
      await caughtUp();
      const uids = (await lakeRows()).map((r) => String(r.uid)).sort();
      assert.deepEqual([...new Set(uids)], [...ingested].sort());
      assert.equal(Number((await status()).resent) >= ingested.length, true);
    });
  });
}
