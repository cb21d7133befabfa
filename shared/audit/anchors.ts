// The audit chain's anchors outside the database: the anchor function signs the head and writes it
// (anchorAuditChain), and verify compares the chain with every anchor (anchorsToCheck). Where they are is
// audit.anchors (a directory, or the stack's Object Lock bucket); the format is in anchors/anchor.ts.
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { dependencyUnavailable } from '../core/errors.ts';
import { openObjectStore } from '../core/object-store/open-store.ts';
import type { ObjectStore } from '../core/object-store/store.ts';
import {
  type AnchorSigner,
  type AnchorStatement,
  latestAnchor,
  readAnchors,
  writeAnchor,
} from './anchors/anchor.ts';
import { kmsSigner, localKeyFile, localKeySigner } from './anchors/signer.ts';
import { type AnchorsToCheck, verifyAuditChain } from './audit.ts';

// Kept between invocations (an S3 client holds connections), for the config it was opened with.
let opened: { for: AnchorsConfig; store: Promise<ObjectStore | undefined> } | undefined;

type AnchorsConfig = Config['audit']['anchors'];

export function openAnchorStore(anchors: AnchorsConfig): Promise<ObjectStore | undefined> {
  if (opened?.for !== anchors) opened = { for: anchors, store: openObjectStore(anchors, 'audit.anchors') };
  return opened.store;
}

/** The KMS key when one is configured (the stack's), else the local key file (generated on first use). */
export async function anchorSigner(
  config: Pick<Config, 'audit' | 'data_dir' | 'env'>,
): Promise<AnchorSigner> {
  const { kms_key_id, key_file } = config.audit.anchors;
  if (kms_key_id) return kmsSigner(kms_key_id);
  if (config.env === 'prod' && !key_file) {
    throw new Error(
      'audit.anchors.kms_key_id is empty: deploy the stack, which passes its key as SVC_AUDIT_ANCHOR_KMS_KEY',
    );
  }
  return localKeySigner(localKeyFile(key_file, config.data_dir));
}

export type AnchorRun =
  | { anchored: AnchorStatement; key: string }
  | { anchored: null; reason: 'no new records'; head_seq: number | null };

/**
 * Anchors the chain's head: checks the records since the newest anchor (all of them when there is none, or when it
 * does not verify), and signs and writes the head when it moved. A broken chain is never anchored: it throws, so
 * that the run fails where it is watched.
 */
export async function anchorAuditChain(
  db: Db,
  store: ObjectStore,
  prefix: string,
  signer: AnchorSigner,
  now = new Date(),
): Promise<AnchorRun> {
  const latest = (await latestAnchor(store, prefix))?.anchor;
  const from = latest && { seq: latest.seq, hash: latest.hash, count: latest.count };
  const chain = await verifyAuditChain(db, from ? { from } : {});
  if (chain.broken_at) {
    throw new Error(
      `audit chain broken at seq ${chain.broken_at.seq} (${chain.broken_at.reason}, record ${chain.broken_at.id}): not anchored`,
    );
  }
  if (!chain.head) return { anchored: null, reason: 'no new records', head_seq: latest?.seq ?? null };
  const { key, statement } = await writeAnchor(
    store,
    prefix,
    signer,
    { ...chain.head, count: (from?.count ?? 0) + chain.checked },
    now,
  );
  return { anchored: statement, key };
}

/** The anchors verify compares the chain with; undefined without audit.anchors. A store that fails is a 503. */
export async function anchorsToCheck(anchors: AnchorsConfig): Promise<AnchorsToCheck | undefined> {
  try {
    const store = await openAnchorStore(anchors);
    if (!store) return undefined;
    const read = await readAnchors(store, anchors.prefix);
    return { location: read.location, anchors: read.anchors, badSignature: read.badSignature };
  } catch (err) {
    throw dependencyUnavailable(
      'anchor_store_unavailable',
      `The audit anchors could not be read (${(err as Error).name}); retry in a few seconds.`,
    );
  }
}
