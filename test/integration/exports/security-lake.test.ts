// The Amazon Security Lake destination end to end, on every driver (docs/exports.md): made through the admin API,
// driven by the scheduled delivery, its objects read back from s3rver with DuckDB (a second Parquet reader) in the
// custom-source layout. Covered: settings refused naming the field; every stored event lands once as API Activity;
// a device's inventory reports (Device and Software Inventory Info), a request's grant and end (User Access
// Management), a proxied query (Datastore Activity) and the alerts the inventory raises (Detection Finding) land
// once each in their own custom sources, valid against our OCSF schemas; the lake down (connections refused) builds
// lag, and delivery resumes from the cursors when it is back (an acknowledgement and a new alert made meanwhile
// each land once, as Update and Create); a replay fills an emptied lake again; a replay from a time sends the class
// events changed from then on and none before.
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
import type { ValidateFunction } from 'ajv';
import { sql } from 'drizzle-orm';
import { queryRows } from '#shared/core/db/query.ts';
import { s3ClientFor } from '#shared/core/object-store/s3-client.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { useAwsKeys } from '#test/support/aws-keys.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { freePort } from '#test/support/free-port.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import { runScheduleUntil, startTestService, type TestService, userToken } from '#test/support/service.ts';
import {
  validateDatastoreActivity,
  validateDetectionFinding,
  validateDeviceInventory,
  validateOcsf,
  validateSoftwareInventory,
  validateUserAccess,
} from '#test/unit/exports/ocsf-schema.ts';

type Json = Record<string, unknown>;
const BUCKET = 'aws-security-data-lake-eu-west-1-acptest';
const SOURCE = 'acp_api_activity';
const partition = (source: string) => `ext/${source}/region=eu-west-1/accountId=123456789012/`;
const PARTITION = partition(SOURCE);
/** The custom source of each other class this lake takes, and the schema its events must hold to. */
const CLASSES = {
  deviceInventory: { source: 'acp_device_inventory', validate: validateDeviceInventory, class_uid: 5001 },
  softwareInventory: { source: 'acp_software', validate: validateSoftwareInventory, class_uid: 5020 },
  userAccess: { source: 'acp_user_access', validate: validateUserAccess, class_uid: 3005 },
  datastoreActivity: { source: 'acp_datastore', validate: validateDatastoreActivity, class_uid: 6005 },
  detectionFinding: { source: 'acp_findings', validate: validateDetectionFinding, class_uid: 2004 },
} as const satisfies Record<string, { source: string; validate: ValidateFunction; class_uid: number }>;
type ClassKey = keyof typeof CLASSES;
// Inventory rows are derived into alerts once they are this old (alerts.settle, above db.statement_timeout).
const SETTLE_MS = 1200;

/** A row as DuckDB gives it in JSON, without the nulls Parquet holds for what an event left out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

for (const driver of driversUnderTest()) {
  describe(`Security Lake destination on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let user: string;
    let requestId = '';
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
        db: { statement_timeout: '1s' },
        query: { statement_timeout: '500ms' },
        alerts: { settle: `${SETTLE_MS}ms` },
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
      await seedDemoDatasource(svc.runtime.database.db);
      user = await userToken(svc, 'rae@example.test', 'rae');
    });
    after(async () => {
      // The request's environment (a role: the whole server's) goes with its revoke; one a test left goes here.
      if (requestId) await svc?.call('POST', `/v1/requests/${requestId}/revoke`, { token: user });
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

    const lakeKeys = async (prefix?: string): Promise<string[]> => {
      const out = await client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, ...(prefix ? { Prefix: prefix } : {}) }),
      );
      return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
    };
    /** Runs `query` (over `{file}`) on each object under `prefix`, as downloaded, with DuckDB. */
    const readLake = async (prefix: string, query: string): Promise<Json[]> => {
      const rows: Json[] = [];
      for (const key of await lakeKeys(prefix)) {
        const body = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        const file = join(dirs.reads, `${randomUUID()}.parquet`);
        writeFileSync(file, await (body.Body?.transformToByteArray() ?? new Uint8Array()));
        const read = await connection.runAndReadAll(query.replace('{file}', `read_parquet('${file}')`));
        rows.push(...(read.getRowObjectsJson() as Json[]));
      }
      return rows;
    };
    /** Every API Activity row the lake holds. */
    const lakeRows = (): Promise<Json[]> =>
      readLake(
        PARTITION,
        `SELECT class_uid, activity_id, metadata.uid AS uid, api.operation AS operation, action_id, time
          FROM {file}`,
      );
    /** Every event of `key` the lake holds, whole, each checked against the class's schema. */
    const classEvents = async (key: ClassKey | 'apiActivity'): Promise<Json[]> => {
      const { source, validate } =
        key === 'apiActivity' ? { source: SOURCE, validate: validateOcsf } : CLASSES[key];
      const rows = await readLake(partition(source), 'SELECT to_json(p)::text AS j FROM {file} p');
      return rows.map((r) => {
        const event = withoutNulls(JSON.parse(String(r.j))) as Json;
        assert.ok(validate(event), `${key}: ${JSON.stringify(validate.errors)}`);
        return event;
      });
    };
    const uidsOf = (events: Json[]) => events.map((e) => String((e.metadata as Json).uid));
    const classCursors = () =>
      queryRows(
        svc.runtime.database.db,
        sql`SELECT class_key, position, attempts, last_error, delivered::int AS delivered FROM export_class_cursors
          WHERE destination_id = ${id}::uuid ORDER BY class_key`,
      );
    /** Runs the alert pass over what was reported until now, and gives every alert. */
    const deriveAlerts = async (): Promise<Json[]> => {
      await sleep(SETTLE_MS + 50);
      await svc.runSchedule('alerts');
      const res = await svc.call('GET', '/v1/admin/alerts?limit=100', { token: admin });
      assert.equal(res.status, 200, res.text);
      return (res.body.data as Json).alerts as Json[];
    };
    /** The Detection Findings in the lake, as (alert id, activity) pairs, sorted. */
    const findings = async () =>
      (await classEvents('detectionFinding'))
        .map((e) => `${(e.finding_info as Json).uid}:${e.activity_id}`)
        .sort();
    /** Reports the device's inventory: one agent with `mcps` MCP servers. */
    const reportInventory = async (mcps: number) => {
      const res = await send(
        svc.url,
        prepare('/v1/devices/inventory', device, {
          agents: [
            {
              agentType: 'cursor',
              displayName: 'Cursor',
              mcps: Array.from({ length: mcps }, (_, i) => ({
                name: `server-${i}`,
                enabled: true,
                transport: 'stdio',
              })),
            },
          ],
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };

    test('admin API: a security_lake destination is made, its bad settings named', async () => {
      const settings = {
        bucket: BUCKET,
        region: 'eu-west-1',
        account_id: '123456789012',
        sources: {
          apiActivity: SOURCE,
          ...Object.fromEntries(Object.entries(CLASSES).map(([k, c]) => [k, c.source])),
        },
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
      for (const e of await classEvents('apiActivity')) assert.equal(e.class_uid, 6003);
    });

    test('inventory reports, a request grant and a proxied query land once each in their own custom sources, as valid OCSF', async () => {
      // Every class the lake takes has a cursor, made with the destination.
      assert.deepEqual(
        (await classCursors()).map((c) => c.class_key),
        ['datastoreActivity', 'detectionFinding', 'deviceInventory', 'softwareInventory', 'userAccess'],
      );
      await reportInventory(2);
      // The servers new to the fleet are alerts, each a Detection Finding (Create, status New) once.
      const alerts = await deriveAlerts();
      assert.ok(alerts.length >= 2, JSON.stringify(alerts));
      const created = await svc.call('POST', '/v1/requests', { token: user, body: demoOrdersRequest() });
      assert.equal(created.status, 201, created.text);
      requestId = String((created.body.data as Json).id);
      const approved = await svc.call('POST', `/v1/admin/requests/${requestId}/approve`, {
        token: admin,
        body: {},
      });
      assert.equal(approved.status, 200, approved.text);
      // A query through the proxy, on the request's environment.
      const queried = await svc.call('POST', `/v1/requests/${requestId}/query`, {
        token: user,
        body: { sql: 'SELECT id FROM eu LIMIT 1' },
      });
      assert.equal(queried.status, 200, queried.text);
      await passUntil(async () => {
        const counts = await Promise.all(
          (Object.keys(CLASSES) as ClassKey[]).map(
            async (k) => (await lakeKeys(partition(CLASSES[k].source))).length,
          ),
        );
        return counts.every((n) => n > 0);
      }, 'the other classes never landed');
      const inventory = await classEvents('deviceInventory');
      assert.equal(inventory.length, 1);
      assert.equal(inventory[0]?.class_uid, 5001);
      assert.match(uidsOf(inventory)[0] ?? '', /^inventory:/);
      const software = await classEvents('softwareInventory');
      assert.deepEqual(software.map((e) => (e.package as Json).name).sort(), [
        'cursor',
        'server-0',
        'server-1',
      ]);
      const access = await classEvents('userAccess');
      assert.equal(access.length, 1);
      assert.equal(access[0]?.class_uid, 3005);
      assert.equal(access[0]?.activity_id, 1, 'Assign Privileges');
      assert.equal((access[0]?.metadata as Json | undefined)?.correlation_uid, requestId);
      const queries = await classEvents('datastoreActivity');
      assert.equal(queries.length, 1);
      assert.equal(queries[0]?.activity_id, 4, 'Query');
      assert.equal(queries[0]?.status_id, 1, 'Success');
      assert.deepEqual(await findings(), alerts.map((a) => `${a.id}:1`).sort());
      for (const finding of await classEvents('detectionFinding')) {
        assert.equal(finding.class_uid, 2004);
        assert.equal(finding.status, 'New');
      }
      // Each sent once, and nothing more, however many passes run after.
      const sent = {
        deviceInventory: 1,
        softwareInventory: 3,
        userAccess: 1,
        datastoreActivity: 1,
        detectionFinding: alerts.length,
      };
      const delivered = async () =>
        Object.fromEntries((await classCursors()).map((c) => [c.class_key, Number(c.delivered)]));
      assert.deepEqual(await delivered(), sent);
      // The status shows each class's stream: taken by this lake, nothing left behind, what it delivered.
      const classes = (await status()).classes as Json[];
      assert.deepEqual(
        classes.map((c) => [c.class, c.sent, c.lag_records, c.delivered, c.last_error]),
        Object.entries(sent)
          .sort()
          .map(([k, n]) => [k, true, 0, n, null]),
      );
      const keys = await lakeKeys();
      for (let i = 0; i < 3; i++) await svc.runSchedule('exportDelivery');
      assert.deepEqual(await lakeKeys(), keys);
      assert.deepEqual(await delivered(), sent);
      assert.ok((await classCursors()).every((c) => c.last_error === null && Number(c.attempts) === 0));
    });

    test('the lake down builds lag and loses nothing: delivery resumes from the cursor', async () => {
      const findingsBefore = await findings();
      await s3?.close();
      s3 = undefined;
      const before = ingested.length;
      let down: Json;
      let classesDown: Record<string, unknown>[];
      let acknowledged = '';
      try {
        // A second inventory report, then tool calls and the request's end, while the lake is down: the report is
        // the oldest record the lake has not had.
        await reportInventory(3);
        await sleep(300);
        await ingest(10);
        const revoked = await svc.call('POST', `/v1/requests/${requestId}/revoke`, { token: user });
        assert.equal(revoked.status, 200, revoked.text);
        requestId = '';
        // An alert acknowledged, and one more opened (the third server is new to the fleet).
        acknowledged = String((await deriveAlerts()).find((a) => a.subject === 'name:server-0')?.id);
        const ack = await svc.call('POST', `/v1/admin/alerts/${acknowledged}/acknowledge`, {
          token: admin,
          body: { note: 'known' },
        });
        assert.equal(ack.status, 200, ack.text);
        await passUntil(async () => (await status()).last_error !== null, 'the lake never failed');
        await passUntil(
          async () => (await classCursors()).filter((c) => c.last_error !== null).length === 4,
          'the class streams never failed',
        );
        down = await status();
        classesDown = await classCursors();
        // The second report (one device) and the revoke are behind the cursors, and shown so.
        const lag = Object.fromEntries((down.classes as Json[]).map((c) => [c.class, c.lag_records]));
        assert.deepEqual(lag, {
          datastoreActivity: 0,
          detectionFinding: 2,
          deviceInventory: 1,
          softwareInventory: 1,
          userAccess: 1,
        });
        for (const c of down.classes as Json[]) {
          assert.equal(Number(c.lag_seconds) > 0, Number(c.lag_records) > 0, `${c.class}: its age`);
        }
        // The metric the alarm watches is the worst stream's: the report's, older than the tool calls.
        const pass = (await svc.runSchedule('exportDelivery')) as { lags: Json[] };
        const lake = pass.lags.find((l) => l.name === 'lake') as Json;
        const classLags = lake.classes as Json[];
        // Both inventory classes stand at the report; each lag is taken at its own instant.
        assert.ok(['deviceInventory', 'softwareInventory'].includes(String(lake.worst)), String(lake.worst));
        assert.equal(lake.lag_seconds, Math.max(...classLags.map((c) => Number(c.lag_seconds))));
        assert.ok(Number(lake.lag_seconds) > Number(down.lag_seconds), JSON.stringify(lake));
        assert.equal(lake.lag_events, 10);
        assert.deepEqual(classLags.map((c) => c.class).sort(), Object.keys(CLASSES).sort());
        // A change to the destination may be the fix: every stream tries again at the next pass.
        const patched = await api('PATCH', `/${id}`, { enabled: true });
        assert.equal(patched.status, 200, patched.text);
        assert.ok((await classCursors()).every((c) => Number(c.attempts) === 0));
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
      for (const c of classesDown) {
        if (c.class_key === 'datastoreActivity') continue;
        assert.equal(c.last_error, 'S3 unreachable (ECONNREFUSED)', String(c.class_key));
      }
      const landed = async () => {
        const [inventory, access] = [await classEvents('deviceInventory'), await classEvents('userAccess')];
        return (
          inventory.length === 2 &&
          access.length === 2 &&
          (await findings()).length === findingsBefore.length + 2
        );
      };
      await passUntil(landed, 'the other classes did not resume');
      // Each once: the reports before and during the outage, the grant and the revoke.
      const inventory = await classEvents('deviceInventory');
      assert.equal(new Set(uidsOf(inventory)).size, 2);
      const access = await classEvents('userAccess');
      assert.deepEqual(access.map((e) => e.activity_id).sort(), [1, 2]);
      assert.equal(new Set(uidsOf(access)).size, 2);
      const software = await classEvents('softwareInventory');
      assert.equal(new Set(uidsOf(software)).size, software.length, 'no software event twice');
      // The acknowledgement an Update (status In Progress), the new server's alert a Create, each once.
      const found = await findings();
      const opened = (await deriveAlerts()).find((a) => a.subject === 'name:server-2');
      assert.deepEqual(found, [...findingsBefore, `${acknowledged}:2`, `${opened?.id}:1`].sort());
      const update = (await classEvents('detectionFinding')).find((e) => e.activity_id === 2);
      assert.equal(update?.status, 'In Progress');
      assert.equal(new Set(uidsOf(await classEvents('detectionFinding'))).size, found.length);
      assert.ok((await classCursors()).every((c) => c.last_error === null));
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

    test('a replay from a time sends the class events changed from then on, and none before', async () => {
      const classesCaughtUp = () =>
        passUntil(
          async () => ((await status()).classes as Json[]).every((c) => c.lag_records === 0),
          'the class streams did not catch up',
        );
      await classesCaughtUp();
      await sleep(50);
      const from = new Date();
      await sleep(50);
      // After `from`: a report with a fourth server (a new alert), and an older alert acknowledged.
      await reportInventory(4);
      const alerts = await deriveAlerts();
      const opened = alerts.find((a) => a.subject === 'name:server-3');
      const acked = alerts.find((a) => a.subject === 'name:server-1');
      assert.ok(opened && acked, JSON.stringify(alerts));
      const ack = await svc.call('POST', `/v1/admin/alerts/${acked.id}/acknowledge`, {
        token: admin,
        body: {},
      });
      assert.equal(ack.status, 200, ack.text);
      await classesCaughtUp();
      const keys = await lakeKeys();
      await client.send(
        new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.map((Key) => ({ Key })) } }),
      );
      const res = await api('POST', `/${id}/replay`, { from: from.toISOString() });
      assert.equal(res.status, 200, res.text);
      const moved = ((res.body.data as Json).status as Json).classes as Json[];
      assert.ok(
        moved
          .filter((c) => c.class !== 'userAccess' && c.class !== 'datastoreActivity')
          .every((c) => Number(c.lag_records) > 0),
        JSON.stringify(moved),
      );
      await classesCaughtUp();
      await caughtUp();
      // The report and the alert changes from `from` on, each once; the grant, revoke and query before it, not.
      assert.deepEqual(await findings(), [`${acked.id}:2`, `${opened.id}:1`].sort());
      const inventory = await classEvents('deviceInventory');
      assert.equal(inventory.length, 1);
      const software = await classEvents('softwareInventory');
      assert.deepEqual(software.map((e) => (e.package as Json).name).sort(), [
        'cursor',
        'server-0',
        'server-1',
        'server-2',
        'server-3',
      ]);
      assert.deepEqual(await lakeKeys(partition(CLASSES.userAccess.source)), []);
      assert.deepEqual(await lakeKeys(partition(CLASSES.datastoreActivity.source)), []);
      // The audit record says which class streams moved back.
      const audit = await svc.call(
        'GET',
        '/v1/admin/audit-logs?action_type=export.destination_replayed&limit=1',
        {
          token: admin,
        },
      );
      assert.equal(audit.status, 200, audit.text);
      const record = ((audit.body.data as Json).logs as Json[])[0] as Json;
      assert.deepEqual((record.metadata as Json).classes, [
        'detectionFinding',
        'deviceInventory',
        'softwareInventory',
      ]);
    });
  });
}
