import { type KeyObject, verify } from 'node:crypto';
import { DeviceAuthError, type DeviceKeyType } from './certificate.ts';

/**
 * Device signatures (device-protocol.md, "Canonical payload and signature"): ECDSA P-256 with SHA-256, DER
 * encoded, or Ed25519, over the canonical payload; sent as base64 (RFC 4648 section 4, padded), also accepted
 * unpadded and in the URL-safe alphabet (section 5).
 */

const bad = (message: string) => new DeviceAuthError('invalid_signature', message);

/** Longer than any P-256 DER (72 bytes) or Ed25519 (64 bytes) signature in base64, with room to spare. */
const MAX_SIGNATURE_CHARS = 256;
const STANDARD = /^[A-Za-z0-9+/]+$/;
const URL_SAFE = /^[A-Za-z0-9_-]+$/;

/**
 * Decodes a signature sent in base64: the standard alphabet padded (RFC 4648 section 4) or unpadded, or the
 * URL-safe alphabet (section 5) padded or unpadded. Refused with `invalid_signature`: an empty value, whitespace or
 * any other character, the two alphabets mixed, wrong padding, a length no base64 text can have, and non-zero
 * trailing bits (RFC 4648 section 3.5), so that every signature has exactly one accepted text per alphabet.
 */
export function decodeSignature(b64: string): Buffer {
  if (typeof b64 !== 'string' || b64.length === 0) throw bad('The signature is empty: send it in base64.');
  // The common case first: standard padded base64 is accepted exactly when it decodes and encodes back to itself.
  if (b64.length <= MAX_SIGNATURE_CHARS && b64.length % 4 === 0) {
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length > 0 && bytes.toString('base64') === b64) return bytes;
  }
  if (b64.length > MAX_SIGNATURE_CHARS) {
    throw bad(`The signature is ${b64.length} characters long; a device signature is at most 96 in base64.`);
  }
  const padding = /=*$/.exec(b64)![0].length;
  const data = b64.slice(0, b64.length - padding);
  if (!STANDARD.test(data) && !URL_SAFE.test(data)) {
    throw bad(
      'The signature is not base64: use the standard alphabet (A-Z a-z 0-9 + /) or the URL-safe one (- _), ' +
        'not both, with no spaces or line breaks.',
    );
  }
  if (data.length % 4 === 1) throw bad('The signature is not base64: its length is impossible.');
  if (padding > 0 && padding !== (4 - (data.length % 4)) % 4) {
    throw bad(
      'The signature has wrong base64 padding: pad to a multiple of 4 characters, or leave the "=" out.',
    );
  }
  const standard = data.replace(/-/g, '+').replace(/_/g, '/');
  const bytes = Buffer.from(standard, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== standard) {
    throw bad('The signature is not canonical base64: its unused trailing bits must be zero.');
  }
  return bytes;
}

// --- ECDSA low-S normalization ---

/** The order n of the P-256 group, and n/2, as 32 big-endian bytes. */
const P256_N = Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex');
const HALF_N = Buffer.from('7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8', 'hex');

/** Where the content of the DER INTEGER at `at` starts and ends; undefined when it is not a short INTEGER. */
function derInteger(der: Buffer, at: number): { start: number; end: number } | undefined {
  const length = der[at + 1];
  if (der[at] !== 0x02 || length === undefined || length === 0 || length > 0x7f) return undefined;
  const end = at + 2 + length;
  return end > der.length ? undefined : { start: at + 2, end };
}

/** The unsigned big-endian value of der[start, end) as 32 bytes; undefined when it needs more. */
function to32(der: Buffer, start: number, end: number): Buffer | undefined {
  let first = start;
  while (first < end && der[first] === 0) first++;
  if (end - first > 32) return undefined;
  const out = Buffer.alloc(32);
  der.copy(out, 32 - (end - first), first, end);
  return out;
}

/** A DER INTEGER holding the unsigned big-endian `value` (leading zeros dropped, a 0x00 added for the sign). */
function encodeInteger(value: Buffer): Buffer {
  let first = 0;
  while (first < value.length - 1 && value[first] === 0) first++;
  const pad = (value[first] as number) & 0x80 ? 1 : 0;
  const out = Buffer.alloc(2 + pad + value.length - first);
  out[0] = 0x02;
  out[1] = out.length - 2;
  value.copy(out, 2 + pad, first);
  return out;
}

/**
 * An ECDSA P-256 DER signature with s replaced by min(s, n − s). (r, s) and (r, n − s) are both valid signatures
 * of the same message, so anyone holding one can make the other; keying replay protection on the low-S form makes
 * the two count as one signature. Input that is not a DER SEQUENCE of two short INTEGERs is returned unchanged.
 * Byte arithmetic on 32-byte values (no BigInt): this runs on every verified P-256 request.
 */
export function lowSEcdsaSignature(der: Buffer): Buffer {
  if (der[0] !== 0x30 || der[1] !== der.length - 2) return der;
  const r = derInteger(der, 2);
  const sField = r && derInteger(der, r.end);
  if (!r || !sField || sField.end !== der.length) return der;
  const s = to32(der, sField.start, sField.end);
  if (!s || s.compare(HALF_N) <= 0) return der;
  // n − s, byte by byte with borrow (s < n for any signature that verified; otherwise leave it alone).
  if (s.compare(P256_N) >= 0) return der;
  const low = Buffer.alloc(32);
  let borrow = 0;
  for (let i = 31; i >= 0; i--) {
    let d = (P256_N[i] as number) - (s[i] as number) - borrow;
    borrow = d < 0 ? 1 : 0;
    if (d < 0) d += 256;
    low[i] = d;
  }
  const rInteger = der.subarray(2, r.end);
  const sInteger = encodeInteger(low);
  return Buffer.concat([Buffer.from([0x30, rInteger.length + sInteger.length]), rInteger, sInteger]);
}

// KeyObject → its curve or type; asymmetricKeyDetails builds a new object on every read.
const keyKinds = new WeakMap<KeyObject, string | undefined>();

function checkKeyType(key: KeyObject, keyType: DeviceKeyType): void {
  // The key must be what keyType says (crypto.verify(null, ...) would also verify ECDSA with SHA-256 for an EC key).
  let actual = keyKinds.get(key);
  if (actual === undefined) {
    actual = key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails?.namedCurve : key.asymmetricKeyType;
    if (typeof key === 'object' && key !== null) keyKinds.set(key, actual);
  }
  if (actual !== (keyType === 'p256' ? 'prime256v1' : 'ed25519')) {
    throw bad(
      `The key is ${actual ?? 'not an asymmetric key'}, not ${keyType}: the signature cannot verify.`,
    );
  }
}

// One reusable buffer for the UTF-8 bytes of a text payload (the body as received): verification is synchronous,
// and allocating a fresh buffer per request costs a sizeable part of verifying a large batch (bench:ingest).
// Bodies are bounded by the routes' maxBody (1 MiB); a larger text is encoded into a buffer of its own.
const SCRATCH_LIMIT = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(0);
const encoder = new TextEncoder();

/** The UTF-8 bytes of `text`, in the shared scratch buffer when they fit it (valid until the next call). */
function utf8Scratch(text: string): Buffer {
  const needed = text.length * 3; // the most UTF-8 bytes a UTF-16 string of this length can need
  if (needed > SCRATCH_LIMIT) return Buffer.from(text, 'utf8');
  if (scratch.length < needed) scratch = Buffer.allocUnsafe(Math.max(needed, 64 * 1024));
  const { written } = encoder.encodeInto(text, scratch);
  return scratch.subarray(0, written);
}

/**
 * crypto.verify of the decoded signature bytes; false (never a throw) for anything that does not verify. A text
 * payload stands for its UTF-8 bytes, encoded into the scratch buffer.
 */
function verifies(
  publicKey: KeyObject,
  keyType: DeviceKeyType,
  payload: Buffer | string,
  bytes: Buffer,
): boolean {
  const data = typeof payload === 'string' ? utf8Scratch(payload) : payload;
  try {
    return keyType === 'ed25519'
      ? verify(null, data, publicKey, bytes)
      : verify('sha256', data, { key: publicKey, dsaEncoding: 'der' }, bytes);
  } catch {
    return false;
  }
}

/** The replay key form of verified signature bytes (ECDSA: low-S, see lowSEcdsaSignature). */
const replayForm = (keyType: DeviceKeyType, bytes: Buffer): Buffer =>
  keyType === 'p256' ? lowSEcdsaSignature(bytes) : Buffer.from(bytes);

/**
 * Like verifyDeviceSignature, but answers undefined instead of throwing when the signature does not verify over
 * `payload` (a malformed signature or a key of the wrong type still throws). For trying a cheaper payload first.
 */
export function tryDeviceSignature(input: {
  publicKey: KeyObject;
  keyType: DeviceKeyType;
  /** The signed bytes, or a text standing for its UTF-8 bytes. */
  payload: Buffer | string;
  signature: Buffer;
}): Buffer | undefined {
  checkKeyType(input.publicKey, input.keyType);
  return verifies(input.publicKey, input.keyType, input.payload, input.signature)
    ? replayForm(input.keyType, input.signature)
    : undefined;
}

/**
 * Verifies a device signature over `payload`: ECDSA P-256 with SHA-256 and a DER (ASN.1) signature, or Ed25519.
 * `signature` is the base64 text (see decodeSignature) or the decoded bytes. Throws `invalid_signature` when it
 * does not verify or is malformed. Returns the signature bytes in canonical form (ECDSA: low-S, see
 * lowSEcdsaSignature; Ed25519 signatures are already unique), which is what replay protection should key on.
 */
export function verifyDeviceSignature(input: {
  publicKey: KeyObject;
  keyType: DeviceKeyType;
  payload: Buffer;
  signature: string | Buffer;
}): Buffer {
  const bytes = typeof input.signature === 'string' ? decodeSignature(input.signature) : input.signature;
  checkKeyType(input.publicKey, input.keyType);
  if (!verifies(input.publicKey, input.keyType, input.payload, bytes)) {
    throw bad(
      input.keyType === 'ed25519'
        ? 'The signature does not verify: sign the UTF-8 bytes of the RFC 8785 canonical JSON body with the ' +
            "certificate's Ed25519 key."
        : 'The signature does not verify: sign the UTF-8 bytes of the RFC 8785 canonical JSON body with the ' +
            "certificate's P-256 key (ECDSA with SHA-256, DER-encoded signature).",
    );
  }
  return replayForm(input.keyType, bytes);
}
