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

/** The order n of the P-256 group. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

function readDerInteger(der: Buffer, at: number): { value: bigint; end: number } | undefined {
  if (der[at] !== 0x02) return undefined;
  const length = der[at + 1];
  if (length === undefined || length === 0 || length > 0x7f) return undefined;
  const end = at + 2 + length;
  if (end > der.length) return undefined;
  return { value: BigInt(`0x${der.subarray(at + 2, end).toString('hex')}`), end };
}

function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/**
 * An ECDSA P-256 DER signature with s replaced by min(s, n − s). (r, s) and (r, n − s) are both valid signatures
 * of the same message, so anyone holding one can make the other; keying replay protection on the low-S form makes
 * the two count as one signature. Input that is not a DER SEQUENCE of two short INTEGERs is returned unchanged.
 */
export function lowSEcdsaSignature(der: Buffer): Buffer {
  if (der[0] !== 0x30 || der[1] !== der.length - 2) return der;
  const r = readDerInteger(der, 2);
  const s = r && readDerInteger(der, r.end);
  if (!r || !s || s.end !== der.length) return der;
  if (s.value <= P256_N / 2n) return der;
  const body = Buffer.concat([derInteger(r.value), derInteger(P256_N - s.value)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
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
  // The key must be what keyType says (crypto.verify(null, ...) would also verify ECDSA with SHA-256 for an EC key).
  const key = input.publicKey;
  const actual =
    key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails?.namedCurve : key.asymmetricKeyType;
  if (actual !== (input.keyType === 'p256' ? 'prime256v1' : 'ed25519')) {
    throw bad(
      `The key is ${actual ?? 'not an asymmetric key'}, not ${input.keyType}: the signature cannot verify.`,
    );
  }
  let valid = false;
  try {
    valid =
      input.keyType === 'ed25519'
        ? verify(null, input.payload, input.publicKey, bytes)
        : verify('sha256', input.payload, { key: input.publicKey, dsaEncoding: 'der' }, bytes);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw bad(
      input.keyType === 'ed25519'
        ? 'The signature does not verify: sign the UTF-8 bytes of the RFC 8785 canonical JSON body with the ' +
            "certificate's Ed25519 key."
        : 'The signature does not verify: sign the UTF-8 bytes of the RFC 8785 canonical JSON body with the ' +
            "certificate's P-256 key (ECDSA with SHA-256, DER-encoded signature).",
    );
  }
  return input.keyType === 'p256' ? lowSEcdsaSignature(bytes) : Buffer.from(bytes);
}
