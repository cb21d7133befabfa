// The audit chain's anchors outside the database, on every driver, in s3rver through the real @aws-sdk/client-s3:
// the anchor function signs the head into the bucket; verify compares the chain with every anchor; the export read
// by the standalone command (scripts/audit-verify.ts, run as a process: no service, no database) verifies the same.
// A changed record, a removed one, two swapped and a chain rewritten with every hash recomputed are each caught,
// the first bad record (or anchor) named, by both.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { sql } from 'drizzle-orm';
import { handler as anchorHandler } from '#functions/audit/anchor.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';
import { type S3Server, startS3Server } from '#test/support/s3-server.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const run = promisify(execFile);
const PREFIX = 'audit';

interface ExportLine {
  seq: number;
  prev_hash: string;
  hash: string;
  record: Record<string, unknown> & { id: string };
}

for (const driver of driversUnderTest()) {
  describe(`audit anchors in s3rver on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let s3: S3Server;
    let client: S3Client;
    let scratch: string;
    before(async () => {
      scratch = mkdtempSync(join(tmpdir(), 'acp-anchors-'));
      s3 = await startS3Server('audit-anchors');
      client = new S3Client({
        region: 'us-east-1',
        endpoint: s3.endpoint,
        forcePathStyle: true,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      svc = await startTestService(driver, {
        audit: {
          anchors: {
            target: 's3',
            bucket: s3.bucket,
            endpoint: s3.endpoint,
            prefix: PREFIX,
            key_file: join(scratch, 'anchor-key.pem'),
          },
        },
      });
      admin = await svc.adminToken();
    });
    after(async () => {
      await svc?.dispose();
      client?.destroy();
      await s3?.close();
      rmSync(scratch, { recursive: true, force: true });
    });

    const ingest = async (actions: string[]) => {
      const res = await svc.call('POST', '/v1/admin/audit-logs', {
        token: admin,
        body: { records: actions.map((action_type) => ({ action_type, timestamp: '2026-01-15T09:30:00Z' })) },
      });
      assert.equal(res.status, 201, res.text);
    };
    const verifyRoute = async () => {
      const res = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal(res.status, 200, res.text);
      return res.body.data as {
        intact: boolean;
        checked: number;
        broken_at: { id: string; seq: number; reason: string } | null;
        anchors: { location: string; checked: number; first_mismatch: Record<string, unknown> | null };
      };
    };
    /** The whole chain through the export route, a page of `limit` at a time. */
    const exportAll = async (limit = 3): Promise<ExportLine[]> => {
      const lines: ExportLine[] = [];
      for (let after = 0; ; ) {
        const res = await svc.call('GET', `/v1/admin/audit-logs/export?after_seq=${after}&limit=${limit}`, {
          token: admin,
        });
        assert.equal(res.status, 200, res.text);
        assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
        const page = res.text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as ExportLine);
        lines.push(...page);
        if (page.length < limit) return lines;
        after = page.at(-1)!.seq;
      }
    };
    const auditVerify = async (lines: ExportLine[] | string, anchors = true) => {
      const file = join(scratch, `export-${Math.random().toString(36).slice(2)}.jsonl`);
      writeFileSync(
        file,
        typeof lines === 'string' ? lines : lines.map((l) => `${JSON.stringify(l)}\n`).join(''),
      );
      const args = [join(PROJECT_ROOT, 'scripts/audit-verify.ts'), file];
      if (anchors) args.push('--anchors', `s3://${s3.bucket}/${PREFIX}`, '--endpoint', s3.endpoint);
      try {
        const out = await run(process.execPath, args, { env: process.env });
        return { code: 0, out: out.stdout.trim() };
      } catch (err) {
        const failed = err as { code: number; stderr: string };
        return { code: failed.code, out: failed.stderr.trim() };
      }
    };
    const objectsUnder = async (prefix: string) =>
      (
        (await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }))).Contents ?? []
      ).map((o) => o.Key as string);
    const objectText = async (key: string) =>
      (await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }))).Body!.transformToString();
    const behindTheService = (statement: ReturnType<typeof sql>) =>
      svc.runtime.database.db.transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL session_replication_role = replica`);
        await tx.execute(statement);
      });
    const chainRows = () =>
      queryRows(
        svc.runtime.database.db,
        sql`SELECT id::text AS id, seq::int AS seq, hash FROM audit_logs ORDER BY seq`,
        { id: col.text, seq: col.number, hash: col.text },
      );

    test('each run anchors the head it finds, signed with a key an auditor checks from the bucket alone', async () => {
      await ingest(['a', 'b', 'c', 'd']);
      const first = await anchorHandler();
      const rows = await chainRows();
      const head = rows.at(-1)!;
      assert.equal((first as { anchored: { seq: number } }).anchored.seq, head.seq);
      assert.equal((await anchorHandler()).anchored, null, 'no new records: no new anchor');
      await ingest(['e', 'f', 'g']);
      await anchorHandler();

      const anchorKeys = await objectsUnder(`${PREFIX}/anchors/`);
      assert.equal(anchorKeys.length, 2);
      const [pemKey, ...otherKeys] = await objectsUnder(`${PREFIX}/keys/`);
      assert.deepEqual(otherKeys, []);
      const publicKey = createPublicKey(await objectText(pemKey!));
      // What an auditor does by hand: the payload's bytes, the signature, the published key (node:crypto alone).
      const newest = JSON.parse(await objectText(anchorKeys.at(-1)!)) as {
        payload: string;
        signature: string;
      };
      assert.ok(
        verify('sha256', Buffer.from(newest.payload), publicKey, Buffer.from(newest.signature, 'base64')),
        'the signature verifies with the published key',
      );
      const statement = JSON.parse(newest.payload) as { seq: number; hash: string; count: number };
      const now = (await chainRows()).at(-1)!;
      assert.deepEqual(
        { seq: statement.seq, hash: statement.hash, count: statement.count },
        { seq: now.seq, hash: now.hash, count: (await chainRows()).length },
      );

      const verified = await verifyRoute();
      assert.equal(verified.intact, true, JSON.stringify(verified));
      assert.deepEqual(verified.anchors, {
        location: `s3://${s3.bucket}/${PREFIX}`,
        checked: 2,
        first_mismatch: null,
      });
      const lines = await exportAll();
      assert.equal(lines.length, (await chainRows()).length);
      assert.deepEqual(await auditVerify(lines), {
        code: 0,
        out: `chain intact: ${lines.length} records, 2 anchors (signed by key ${pemKey!.slice(`${PREFIX}/keys/`.length, -'.pem'.length)})`,
      });
    });

    test('the command names the first bad record of an export: changed, removed, two swapped; or a bad line', async () => {
      const lines = await exportAll(1000);
      const [, second, third, fourth] = lines as [ExportLine, ExportLine, ExportLine, ExportLine];
      const changed = lines.map((l) =>
        l === second ? { ...l, record: { ...l.record, stage: 'rewritten' } } : l,
      );
      const outcome = await auditVerify(changed);
      assert.equal(outcome.code, 1);
      assert.match(
        outcome.out,
        new RegExp(`^chain broken at record ${second.record.id} \\(seq ${second.seq}, line 2,.*changed`),
      );
      const removed = await auditVerify(lines.filter((l) => l !== third));
      assert.equal(removed.code, 1);
      assert.match(
        removed.out,
        new RegExp(`^chain broken at record ${fourth.record.id} \\(seq ${fourth.seq}, line 3,.*prev_hash`),
      );
      const swapped = await auditVerify(lines.map((l) => (l === second ? third : l === third ? second : l)));
      assert.equal(swapped.code, 1);
      assert.match(
        swapped.out,
        new RegExp(`^chain broken at record ${third.record.id} \\(seq ${third.seq}, line 2,`),
      );
      const truncated = await auditVerify(lines.slice(0, -1));
      assert.equal(truncated.code, 1, 'an export that ends before the newest anchor');
      assert.match(
        truncated.out,
        /^anchor audit\/anchors\/0+\d+\.json \(seq \d+\) does not match the chain: missing/,
      );
      const garbage = await auditVerify(`${JSON.stringify(lines[0])}\nnot json\n`, false);
      assert.deepEqual(garbage, {
        code: 1,
        out: 'line 2 is not an export record (seq, prev_hash, hash, record)',
      });
    });

    test('verify and the command name a changed record, two swapped, a removed one, and a rewritten chain', async () => {
      const [, second, third, fourth] = (await chainRows()) as Array<{
        id: string;
        seq: number;
        hash: string;
      }>;
      const both = async (expected: { id: string; seq: number; reason: string }) => {
        const verified = await verifyRoute();
        assert.equal(verified.intact, false);
        assert.deepEqual(
          { id: verified.broken_at?.id, seq: verified.broken_at?.seq, reason: verified.broken_at?.reason },
          expected,
        );
        const outcome = await auditVerify(await exportAll());
        assert.equal(outcome.code, 1);
        assert.match(
          outcome.out,
          new RegExp(`^chain broken at record ${expected.id} \\(seq ${expected.seq},`),
        );
      };
      await behindTheService(sql`UPDATE audit_logs SET stage = 'rewritten' WHERE id = ${second!.id}::uuid`);
      await both({ id: second!.id, seq: second!.seq, reason: 'content' });
      await behindTheService(sql`UPDATE audit_logs SET stage = '' WHERE id = ${second!.id}::uuid`);
      assert.equal((await verifyRoute()).intact, true, 'restored, it verifies again');

      const setSeq = (id: string, seq: number) =>
        behindTheService(sql`UPDATE audit_logs SET seq = ${seq} WHERE id = ${id}::uuid`);
      await setSeq(second!.id, -1);
      await setSeq(third!.id, second!.seq);
      await setSeq(second!.id, third!.seq);
      await both({ id: third!.id, seq: second!.seq, reason: 'link' });
      await setSeq(third!.id, -1);
      await setSeq(second!.id, second!.seq);
      await setSeq(third!.id, third!.seq);
      assert.equal((await verifyRoute()).intact, true, 'swapped back, it verifies again');

      // Removed, then every later hash recomputed: consistent again, and only the anchors still see it.
      await behindTheService(sql`DELETE FROM audit_logs WHERE id = ${third!.id}::uuid`);
      await both({ id: fourth!.id, seq: fourth!.seq, reason: 'link' });
      const exported = await exportAll(1000);
      let prev = exported.find((l) => l.seq === second!.seq)!.hash;
      const { chainedHash } = await import('#shared/audit/chain.ts');
      for (const line of exported.filter((l) => l.seq > second!.seq)) {
        const hash = chainedHash(prev, line.record as never);
        await behindTheService(
          sql`UPDATE audit_logs SET prev_hash = ${prev}, hash = ${hash} WHERE id = ${line.record.id}::uuid`,
        );
        prev = hash;
      }
      const verified = await verifyRoute();
      assert.equal(verified.broken_at, null, 'the rewritten chain is consistent');
      assert.equal(verified.intact, false);
      const firstAnchor = (await objectsUnder(`${PREFIX}/anchors/`))[0]!;
      assert.deepEqual(verified.anchors.first_mismatch, {
        key: firstAnchor,
        seq: Number(firstAnchor.slice(`${PREFIX}/anchors/`.length, -'.json'.length)),
        reason: 'hash',
        after_seq: 0,
      });
      const outcome = await auditVerify(await exportAll());
      assert.deepEqual(outcome, {
        code: 1,
        out: `anchor ${firstAnchor} (seq ${verified.anchors.first_mismatch?.seq}) does not match the chain: hash; the chain changed after seq 0`,
      });
    });

    test('an anchor whose signature does not verify is named, by verify and by the command', async () => {
      const [firstAnchor] = await objectsUnder(`${PREFIX}/anchors/`);
      const forged = JSON.parse(await objectText(firstAnchor!)) as { payload: string; signature: string };
      const statement = JSON.parse(forged.payload) as Record<string, unknown>;
      const seq = 9_000_000;
      const key = `${PREFIX}/anchors/${String(seq).padStart(20, '0')}.json`;
      await client.send(
        new PutObjectCommand({
          Bucket: s3.bucket,
          Key: key,
          Body: JSON.stringify({
            payload: JSON.stringify({ ...statement, seq }),
            signature: forged.signature,
          }),
        }),
      );
      const verified = await verifyRoute();
      assert.equal(verified.anchors.first_mismatch?.key, key);
      assert.equal(verified.anchors.first_mismatch?.reason, 'signature');
      const outcome = await auditVerify(await exportAll());
      assert.deepEqual(outcome, {
        code: 1,
        out: `anchor ${key} (seq ${seq}) does not match the chain: signature; the chain changed after seq 0`,
      });
    });
  });
}
