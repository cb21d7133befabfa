// The Security Lake destination against a real S3 API (s3rver) through the real AWS SDK, with DuckDB as the second
// reader of what landed: the custom-source layout (ext/<source>/region=/accountId=/eventDay=/), one class per source,
// Parquet holding OCSF's nested attributes, a batch sent twice landing once, and failures it reports for a retry.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { s3ClientFor } from '#shared/core/object-store/s3-client.ts';
import {
  SecurityLakeDestination,
  type SecurityLakeSettings,
} from '#shared/exports/destinations/security-lake.ts';
import {
  toOcsfDatastoreActivity,
  toOcsfDetectionFinding,
  toOcsfDeviceInventory,
  toOcsfSoftwareInventory,
  toOcsfUserAccess,
} from '#shared/exports/ocsf.ts';
import type { OcsfClassKey } from '#shared/exports/ocsf-objects.ts';
import type { ExportSource } from '#shared/exports/source.ts';
import { freePort } from '#test/support/free-port.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import {
  alert,
  allowedEvent,
  auditRecord,
  bareEvent,
  deniedEvent,
  errorEvent,
  inventory,
  request,
  SHA,
  usage,
} from './fixtures.ts';

const PARTITION = 'region=eu-west-1/accountId=123456789012';
const KEY = new RegExp(
  `^ext/(acp_api_activity|acp_findings)/${PARTITION.replaceAll('/', '\\/')}/eventDay=(\\d{8})/[0-9a-f]{32}\\.parquet$`,
);

const nextDay: ExportSource = {
  event: {
    ...allowedEvent,
    id: '4720',
    event_time: '2026-11-21T00:00:01.000Z',
    received_at: '2026-11-21T00:00:02.000Z',
  },
};
const batch: ExportSource[] = [
  { event: errorEvent },
  { event: allowedEvent },
  { event: deniedEvent },
  { event: bareEvent },
  nextDay,
];

describe('exports: Security Lake destination', () => {
  let s3: S3Server;
  let client: S3Client;
  let dir: string;
  let duck: DuckDBInstance;
  let connection: DuckDBConnection;
  let settings: SecurityLakeSettings;

  before(async () => {
    s3 = await startS3Server('aws-security-data-lake-eu-west-1-test');
    client = s3ClientFor({ endpoint: s3.endpoint, region: 'eu-west-1' });
    dir = mkdtempSync(join(tmpdir(), 'acp-lake-'));
    duck = await DuckDBInstance.create(':memory:');
    connection = await duck.connect();
    settings = {
      bucket: s3.bucket,
      region: 'eu-west-1',
      account_id: '123456789012',
      sources: { apiActivity: 'acp_api_activity', detectionFinding: 'acp_findings' },
    };
  });
  after(async () => {
    connection?.closeSync();
    duck?.closeSync();
    client?.destroy();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function keys(): Promise<string[]> {
    const out = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
  }

  /** Downloads an object and has DuckDB run `sql` over it (`FILE` is the file). */
  async function duckRead(key: string, sql: string) {
    const body = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    const file = join(dir, key.replaceAll('/', '_'));
    writeFileSync(file, await (body.Body?.transformToByteArray() ?? new Uint8Array()));
    const result = await connection.runAndReadAll(sql.replaceAll('FILE', `read_parquet('${file}')`));
    return result.getRowObjectsJson();
  }

  test('tool calls land as API Activity, one object per event day, rows by time, nested as OCSF nests them', async () => {
    const lake = new SecurityLakeDestination(settings, { endpoint: s3.endpoint });
    try {
      assert.deepEqual(await lake.send(batch), { ok: true });
    } finally {
      lake.close();
    }
    const landed = await keys();
    assert.equal(landed.length, 2, landed.join('\n'));
    assert.deepEqual(
      landed.map((k) => KEY.exec(k)?.slice(1)),
      [
        ['acp_api_activity', '20261120'],
        ['acp_api_activity', '20261121'],
      ],
    );
    const [day1 = '', day2 = ''] = landed;
    assert.deepEqual(
      await duckRead(
        day1,
        `SELECT class_uid, type_uid, metadata.uid AS uid, metadata.version AS version, "time",
                api.service.name AS server, resources[1].name AS tool, status_id, status_code, action_id,
                actor.user.email_addr AS email, src_endpoint.ip AS ip, message_context.total_tokens AS tokens
         FROM FILE`,
      ),
      [
        // 10:00:00Z on 2026-11-20 for all four; the tie is ordered by uid.
        {
          class_uid: 6003,
          type_uid: '600399',
          uid: '4711',
          version: '1.8.0',
          time: '1795168800000',
          server: 'github',
          tool: 'create_issue',
          status_id: 1,
          status_code: null,
          action_id: 1,
          email: 'dev@example.com',
          ip: '203.0.113.7',
          tokens: 1280,
        },
        {
          class_uid: 6003,
          type_uid: '600399',
          uid: '4712',
          version: '1.8.0',
          time: '1795168800000',
          server: 'linear',
          tool: 'list_issues',
          status_id: 1,
          status_code: null,
          action_id: 1,
          email: null,
          ip: null,
          tokens: 0,
        },
        {
          class_uid: 6003,
          type_uid: '600399',
          uid: '4713',
          version: '1.8.0',
          time: '1795168800000',
          server: 'postgres-prod',
          tool: 'query',
          status_id: 2,
          status_code: 'policy_denied',
          action_id: 2,
          email: 'dev@example.com',
          ip: '203.0.113.7',
          tokens: 0,
        },
        {
          class_uid: 6003,
          type_uid: '600399',
          uid: '4714',
          version: '1.8.0',
          time: '1795168800000',
          server: 'filesystem',
          tool: 'read_file',
          status_id: 2,
          status_code: 'tool_error',
          action_id: 1,
          email: 'dev@example.com',
          ip: '203.0.113.7',
          tokens: 10,
        },
      ],
    );
    assert.deepEqual(await duckRead(day2, 'SELECT metadata.uid AS uid, "time" FROM FILE'), [
      { uid: '4720', time: '1795219201000' },
    ]);
    // OCSF's objects are structs and its arrays lists; time is OCSF's epoch milliseconds.
    const columns = await duckRead(day1, 'DESCRIBE SELECT "time", metadata, resources, policy FROM FILE');
    assert.deepEqual(
      columns.map((c) => [c.column_name, String(c.column_type).split('(')[0]]),
      [
        ['time', 'BIGINT'],
        ['metadata', 'STRUCT'],
        ['resources', 'STRUCT'],
        ['policy', 'STRUCT'],
      ],
    );
    assert.match(String(columns[2]?.column_type), /\)\[\]$/);
  });

  test('the same batch sent again rewrites the same objects: nothing lands twice', async () => {
    const before = await keys();
    const lake = new SecurityLakeDestination(settings, { endpoint: s3.endpoint });
    try {
      assert.deepEqual(await lake.send([...batch].reverse()), { ok: true });
    } finally {
      lake.close();
    }
    assert.deepEqual(await keys(), before);
    const [day1 = ''] = before;
    assert.deepEqual(await duckRead(day1, 'SELECT count(*)::INTEGER AS n FROM FILE'), [{ n: 4 }]);
  });

  test('another class goes to its own custom source; a class without one is refused for good', async () => {
    const lake = new SecurityLakeDestination(settings, { endpoint: s3.endpoint });
    try {
      const finding = toOcsfDetectionFinding(
        {
          id: '5e6f7a8b-0000-4000-8000-000000000005',
          kind: 'new_server',
          subject: 'npm:@x/y',
          status: 'open',
          details: { identity: 'npm:@x/y', name: 'y' },
          device_count: 2,
          first_seen_at: '2026-11-20T09:00:00.000Z',
          last_seen_at: '2026-11-20T10:00:00.000Z',
          acknowledged_at: null,
          acknowledged_by: null,
          acknowledge_note: null,
        },
        0,
      );
      assert.deepEqual(await lake.sendOcsf('detectionFinding', [finding]), { ok: true });
      const refused = await lake.sendOcsf('userAccess', []);
      assert.equal(refused.ok, false);
      assert.equal(!refused.ok && refused.permanent, true);
    } finally {
      lake.close();
    }
    const findings = (await keys()).filter((k) => k.startsWith('ext/acp_findings/'));
    assert.equal(findings.length, 1);
    assert.deepEqual(KEY.exec(findings[0] ?? '')?.slice(1), ['acp_findings', '20261120']);
    assert.deepEqual(
      await duckRead(
        findings[0] ?? '',
        `SELECT class_uid, finding_info.uid AS uid, finding_info.analytic.type_id AS analytic, severity_id
         FROM FILE`,
      ),
      [{ class_uid: 2004, uid: '5e6f7a8b-0000-4000-8000-000000000005', analytic: 1, severity_id: 2 }],
    );
  });

  test('a missing bucket is a permanent failure with its status; a lake out of reach is worth a retry', async () => {
    const missing = new SecurityLakeDestination(
      { ...settings, bucket: 'no-such-lake' },
      { endpoint: s3.endpoint },
    );
    const port = await freePort();
    const down = new SecurityLakeDestination(settings, { endpoint: `http://127.0.0.1:${port}` });
    try {
      const result = await missing.send(batch);
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.status, 404);
      assert.equal(!result.ok && result.permanent, true);
      const unreachable = await down.send(batch);
      assert.equal(unreachable.ok, false);
      assert.equal(!unreachable.ok && unreachable.permanent, false);
      assert.equal(!unreachable.ok && unreachable.status, undefined);
      assert.doesNotMatch(!unreachable.ok ? unreachable.message : '', /S3RVER|secret/i);
    } finally {
      missing.close();
      down.close();
    }
  });

  test('every class we map lands in its own source and reads back with its class and uids', async () => {
    const access = toOcsfUserAccess({
      audit: auditRecord('request.approved', 'admin@example.com', 'auth0|admin', '198.51.100.4'),
      request,
    });
    assert.ok(access);
    const perClass: [OcsfClassKey, { time: number; metadata: { uid: string } }[], number][] = [
      ['deviceInventory', [toOcsfDeviceInventory(inventory)], 5001],
      ['softwareInventory', toOcsfSoftwareInventory(inventory), 5020],
      ['userAccess', [access], 3005],
      [
        'datastoreActivity',
        [toOcsfDatastoreActivity(usage('query', { sql_sha256: SHA, row_count: 3 }))],
        6005,
      ],
      ['detectionFinding', [toOcsfDetectionFinding(alert, 0)], 2004],
    ];
    const sources = Object.fromEntries(perClass.map(([key]) => [key, `acp_${key.toLowerCase()}`]));
    const lake = new SecurityLakeDestination({ ...settings, sources }, { endpoint: s3.endpoint });
    try {
      for (const [key, events, classUid] of perClass) {
        assert.deepEqual(await lake.sendOcsf(key, events), { ok: true }, key);
        const landed = (await keys()).filter((k) =>
          k.startsWith(`ext/acp_${key.toLowerCase()}/${PARTITION}/`),
        );
        const rows = [];
        for (const k of landed)
          rows.push(...(await duckRead(k, 'SELECT class_uid, metadata.uid AS uid FROM FILE')));
        assert.deepEqual(
          rows.map((r) => [r.class_uid, r.uid]).sort(),
          events.map((e) => [classUid, e.metadata.uid]).sort(),
          key,
        );
      }
    } finally {
      lake.close();
    }
  });
});
