// npm run audit:verify -- <export file> [--anchors <dir | s3://bucket/prefix>] [--endpoint <url>] [--region <r>]
//   [--public-key <pem file>]
// Checks an export of the audit chain (GET /v1/admin/audit-logs/export, JSON lines) without the service or its
// database: recomputes every record's hash and link, checks each anchor's signature, and that the chain passes
// through each anchor's (seq, hash, count). Exits 0 with "chain intact: N records, M anchors", else 1 naming the
// first bad record or anchor (docs/exports.md, "How an auditor verifies the chain").
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { readAnchors } from '#shared/audit/anchors/anchor.ts';
import { type AuditContent, ChainWalk } from '#shared/audit/chain.ts';
import { DirectoryObjectStore } from '#shared/core/object-store/dir-store.ts';
import type { ObjectStore } from '#shared/core/object-store/store.ts';

const USAGE =
  'usage: npm run audit:verify -- <export file> [--anchors <dir | s3://bucket/prefix>] [--endpoint <url>] [--region <region>] [--public-key <pem file>]';

async function openAnchors(where: string, endpoint: string, region: string) {
  const s3 = /^s3:\/\/([^/]+)\/?(.*?)\/?$/.exec(where);
  if (!s3) return { store: new DirectoryObjectStore(where) as ObjectStore, prefix: '', close: () => {} };
  const { S3ObjectStore } = await import('#shared/core/object-store/s3-store.ts');
  const [, bucket = '', prefix = ''] = s3;
  const store = new S3ObjectStore({ bucket, prefix, endpoint, region }, '--anchors');
  return { store: store as ObjectStore, prefix, close: () => store.close() };
}

const isText = (v: unknown): v is string => typeof v === 'string';

/** An export line as the walk takes it; undefined when it is not one. */
function recordOf(line: string) {
  try {
    const parsed = JSON.parse(line) as { seq: unknown; prev_hash: unknown; hash: unknown; record: unknown };
    const record = parsed.record as AuditContent;
    if (
      !Number.isSafeInteger(parsed.seq) ||
      !isText(parsed.prev_hash) ||
      !isText(parsed.hash) ||
      typeof record !== 'object' ||
      record === null ||
      !isText(record.id)
    )
      return undefined;
    return { seq: parsed.seq as number, prevHash: parsed.prev_hash, hash: parsed.hash, content: record };
  } catch {
    return undefined;
  }
}

/** The verdict on an export: the lines printed and the exit code. */
export async function verifyExport(
  file: string,
  options: { anchors?: string; endpoint?: string; region?: string; publicKey?: string },
): Promise<{ ok: boolean; message: string }> {
  let anchors: Awaited<ReturnType<typeof readAnchors>> | undefined;
  if (options.anchors) {
    const opened = await openAnchors(options.anchors, options.endpoint ?? '', options.region ?? '');
    try {
      const pinned = options.publicKey ? readFileSync(options.publicKey, 'utf8') : undefined;
      anchors = await readAnchors(opened.store, opened.prefix, pinned);
    } finally {
      opened.close();
    }
  }
  const walk = new ChainWalk(anchors?.anchors, undefined, anchors?.badSignature ?? null);
  let lineNo = 0;
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) {
    lineNo++;
    if (line.trim() === '') continue;
    const record = recordOf(line);
    if (!record)
      return { ok: false, message: `line ${lineNo} is not an export record (seq, prev_hash, hash, record)` };
    const broken = walk.step(record);
    if (broken) {
      return {
        ok: false,
        message: `chain broken at record ${broken.id} (seq ${broken.seq}, line ${lineNo}, timestamp ${broken.timestamp}): ${
          broken.reason === 'content'
            ? 'its fields do not give its hash (changed)'
            : 'its prev_hash is not the hash of the record before it (a record removed, moved or put in before it)'
        }`,
      };
    }
  }
  const results = anchors && walk.anchorResults(anchors.location);
  const mismatch = results?.first_mismatch;
  if (mismatch) {
    return {
      ok: false,
      message: `anchor ${mismatch.key} (seq ${mismatch.seq}) does not match the chain: ${mismatch.reason}; the chain changed after seq ${mismatch.after_seq}`,
    };
  }
  const keys = anchors?.keyIds.length ? ` (signed by key ${anchors.keyIds.join(', ')})` : '';
  return {
    ok: true,
    message: `chain intact: ${walk.checked} records, ${results?.checked ?? 0} anchors${keys}`,
  };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      anchors: { type: 'string' },
      endpoint: { type: 'string' },
      region: { type: 'string' },
      'public-key': { type: 'string' },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) {
    console.error(USAGE);
    process.exit(2);
  }
  const verdict = await verifyExport(file, {
    ...(values.anchors ? { anchors: values.anchors } : {}),
    ...(values.endpoint ? { endpoint: values.endpoint } : {}),
    ...(values.region ? { region: values.region } : {}),
    ...(values['public-key'] ? { publicKey: values['public-key'] } : {}),
  });
  (verdict.ok ? console.log : console.error)(verdict.message);
  process.exit(verdict.ok ? 0 : 1);
}
