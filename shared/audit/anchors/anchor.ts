// An anchor: the audit chain's head at one moment, signed with an asymmetric key and written where the service
// cannot rewrite it (the stack's bucket has Object Lock in compliance mode). Layout under the store's prefix:
//   <prefix>/anchors/<seq, 20 digits>.json  {"payload": "<canonical JSON of the statement>", "signature": "<base64>"}
//   <prefix>/keys/<key_id>.pem              the public key (SPKI PEM); key_id is the SHA-256 (hex) of its DER
// The signature is ECDSA P-256 over SHA-256 of the payload's UTF-8 bytes (DER encoded), so that anyone checks an
// anchor with the public key alone (docs/exports.md, "How an auditor verifies the chain").
import { createHash, createPublicKey, verify } from 'node:crypto';
import { canonicalize } from '../../core/canonical-json.ts';
import type { ObjectStore } from '../../core/object-store/store.ts';
import type { AnchoredHead } from '../chain.ts';

export const ANCHOR_FORMAT = 'agent-control-plane/audit-anchor/v1';

/** What an anchor states, signed as its canonical JSON. */
export interface AnchorStatement {
  format: typeof ANCHOR_FORMAT;
  /** The head: the last record of the chain when anchored. */
  seq: number;
  hash: string;
  /** Records in the chain up to and including seq. */
  count: number;
  /** When the head record was stored, and when the anchor was written (ISO 8601 UTC). */
  head_created_at: string;
  anchored_at: string;
  algorithm: 'ECDSA_SHA_256';
  key_id: string;
}

/** What signs anchors: a local key file or a KMS key (signer.ts). */
export interface AnchorSigner {
  /** The public key, SubjectPublicKeyInfo DER. */
  publicKey(): Promise<Uint8Array>;
  /** An ECDSA P-256 signature (DER) of SHA-256 of the message. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

const anchorsDir = (prefix: string) => `${prefix ? `${prefix}/` : ''}anchors/`;
const keysDir = (prefix: string) => `${prefix ? `${prefix}/` : ''}keys/`;
export const anchorKey = (prefix: string, seq: number) =>
  `${anchorsDir(prefix)}${String(seq).padStart(20, '0')}.json`;
export const publicKeyKey = (prefix: string, keyId: string) => `${keysDir(prefix)}${keyId}.pem`;

export const keyIdOf = (spkiDer: Uint8Array): string => createHash('sha256').update(spkiDer).digest('hex');

const spkiPem = (der: Uint8Array) =>
  createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' }).export({
    type: 'spki',
    format: 'pem',
  }) as string;

/** Signs the head and writes its anchor, and the public key beside it (once per key). */
export async function writeAnchor(
  store: ObjectStore,
  prefix: string,
  signer: AnchorSigner,
  head: { seq: number; hash: string; count: number; created_at: string },
  now = new Date(),
): Promise<{ key: string; statement: AnchorStatement }> {
  const der = await signer.publicKey();
  const keyId = keyIdOf(der);
  const pemKey = publicKeyKey(prefix, keyId);
  if (!(await store.get(pemKey)))
    await store.put(pemKey, Buffer.from(spkiPem(der)), 'application/x-pem-file');
  const statement: AnchorStatement = {
    format: ANCHOR_FORMAT,
    seq: head.seq,
    hash: head.hash,
    count: head.count,
    head_created_at: head.created_at,
    anchored_at: now.toISOString(),
    algorithm: 'ECDSA_SHA_256',
    key_id: keyId,
  };
  const payload = canonicalize(statement);
  const signature = await signer.sign(Buffer.from(payload, 'utf8'));
  const key = anchorKey(prefix, head.seq);
  const body = `${JSON.stringify({ payload, signature: Buffer.from(signature).toString('base64') })}\n`;
  await store.put(key, Buffer.from(body, 'utf8'), 'application/json');
  return { key, statement };
}

/** The anchors of a store, each checked against its signature, in seq order. */
export interface ReadAnchors {
  location: string;
  anchors: AnchoredHead[];
  /** The first anchor (by seq) whose signature, key or form does not verify; the anchors after it are not used. */
  badSignature: AnchoredHead | null;
  /** The keys the anchors were signed with (key ids). */
  keyIds: string[];
}

/** Finds each key an anchor names: in the store (its id checked against the key's own digest), or only `pinnedKey`. */
function publicKeys(store: ObjectStore, prefix: string, pinnedKey?: string) {
  const keys = new Map<string, string | null>();
  const pinnedId = pinnedKey === undefined ? undefined : keyIdOf(spkiDerOf(pinnedKey));
  const publicKeyOf = async (keyId: string): Promise<string | null> => {
    if (pinnedId !== undefined) return keyId === pinnedId ? (pinnedKey ?? null) : null;
    if (!keys.has(keyId)) {
      const pem = await store.get(publicKeyKey(prefix, keyId));
      const text = pem && Buffer.from(pem).toString('utf8');
      let ok = false;
      try {
        ok = !!text && keyIdOf(spkiDerOf(text)) === keyId;
      } catch {
        ok = false;
      }
      keys.set(keyId, ok ? (text as string) : null);
    }
    return keys.get(keyId) ?? null;
  };
  const used = () => (pinnedId ? [pinnedId] : [...keys.entries()].filter(([, pem]) => pem).map(([id]) => id));
  return { publicKeyOf, used };
}

const spkiDerOf = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });

/** The anchor at `key`, its signature checked; undefined when it does not verify (or names another seq). */
async function anchorAt(
  store: ObjectStore,
  prefix: string,
  key: string,
  publicKeyOf: (keyId: string) => Promise<string | null>,
): Promise<AnchoredHead | undefined> {
  const seqOfKey = Number(key.slice(anchorsDir(prefix).length, -'.json'.length));
  const checked = await checkAnchor((await store.get(key)) ?? new Uint8Array(), publicKeyOf);
  if (!checked || checked.seq !== seqOfKey) return undefined;
  return { key, seq: checked.seq, hash: checked.hash, count: checked.count };
}

const anchorKeys = async (store: ObjectStore, prefix: string) =>
  (await store.list(anchorsDir(prefix))).filter((key) => key.endsWith('.json'));

/**
 * Reads every anchor and checks its signature with the public key it names (from the store, or only `pinnedKey`, an
 * SPKI PEM an auditor got elsewhere).
 */
export async function readAnchors(
  store: ObjectStore,
  prefix: string,
  pinnedKey?: string,
): Promise<ReadAnchors> {
  const keys = publicKeys(store, prefix, pinnedKey);
  const anchors: AnchoredHead[] = [];
  let badSignature: AnchoredHead | null = null;
  for (const key of await anchorKeys(store, prefix)) {
    const anchor = await anchorAt(store, prefix, key, keys.publicKeyOf);
    if (!anchor) {
      badSignature = {
        key,
        seq: Number(key.slice(anchorsDir(prefix).length, -'.json'.length)),
        hash: '',
        count: 0,
      };
      break;
    }
    anchors.push(anchor);
  }
  return { location: store.location, anchors, badSignature, keyIds: keys.used() };
}

/** The newest anchor (of the highest seq), its signature checked: where the anchor function goes on from. */
export async function latestAnchor(
  store: ObjectStore,
  prefix: string,
): Promise<{ key: string; anchor: AnchoredHead | undefined } | undefined> {
  const key = (await anchorKeys(store, prefix)).at(-1);
  if (!key) return undefined;
  return { key, anchor: await anchorAt(store, prefix, key, publicKeys(store, prefix).publicKeyOf) };
}

/** The statement of an anchor object whose signature verifies with the key it names; undefined otherwise. */
async function checkAnchor(
  body: Uint8Array,
  publicKeyOf: (keyId: string) => Promise<string | null>,
): Promise<AnchorStatement | undefined> {
  try {
    const { payload, signature } = JSON.parse(Buffer.from(body).toString('utf8')) as {
      payload: string;
      signature: string;
    };
    const statement = JSON.parse(payload) as AnchorStatement;
    if (statement.format !== ANCHOR_FORMAT || statement.algorithm !== 'ECDSA_SHA_256') return undefined;
    const pem = await publicKeyOf(statement.key_id);
    if (!pem) return undefined;
    const valid = verify('sha256', Buffer.from(payload, 'utf8'), pem, Buffer.from(signature, 'base64'));
    if (!valid || !Number.isSafeInteger(statement.seq) || !Number.isSafeInteger(statement.count))
      return undefined;
    return statement;
  } catch {
    return undefined;
  }
}
