import { createHash, type KeyObject, X509Certificate } from 'node:crypto';
import { ServiceError } from '../../core/errors.ts';

/**
 * Device certificates (device-protocol.md, "Keys and certificates"): a self-signed X.509 certificate in PEM over an
 * ECDSA P-256 or Ed25519 key. Its fingerprint (lowercase hex SHA-256 over the DER) is the device's identity.
 */

export type DeviceAuthErrorCode =
  | 'invalid_certificate'
  | 'unsupported_key'
  | 'invalid_signature'
  | 'stale_timestamp'
  | 'replayed_request'
  | 'unknown_device';

/** A refused device request: `code` is the wire error code, `status` its HTTP status. */
/** A refused device credential: an unsupported key type is invalid input, anything else proves nothing (401). */
export class DeviceAuthError extends ServiceError {
  override name = 'DeviceAuthError';
  declare readonly code: DeviceAuthErrorCode;

  constructor(code: DeviceAuthErrorCode, message: string) {
    super(code === 'unsupported_key' ? 'invalid' : 'unauthenticated', code, message);
  }
}

export type DeviceKeyType = 'p256' | 'ed25519';

export interface DeviceCertificate {
  /** Lowercase hex SHA-256 over the DER bytes, 64 characters. */
  fingerprint: string;
  publicKey: KeyObject;
  keyType: DeviceKeyType;
  /** The subject distinguished name as OpenSSL prints it (one `attr=value` per line). */
  subject: string;
  /** The serial number in uppercase hex, as node:crypto reports it. */
  serialNumber: string;
  validFrom: Date;
  validTo: Date;
}

const invalid = (message: string) => new DeviceAuthError('invalid_certificate', message);

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END ([A-Z0-9 ]+)-----/g;
const BASE64_BODY = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The DER bytes of the one CERTIFICATE block in `pem` (RFC 7468; text around the block is allowed, as are line
 * breaks and spaces inside it). No block, several blocks or a body that is not base64 is `invalid_certificate`.
 */
function pemToDer(pem: unknown): Buffer {
  if (typeof pem !== 'string' || pem.length === 0) {
    throw invalid('The certificate is missing: send the device certificate as a PEM string.');
  }
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  const certs = blocks.filter((b) => b[1] === 'CERTIFICATE');
  if (certs.length === 0) {
    throw invalid(
      'The certificate is not PEM: expected a "-----BEGIN CERTIFICATE-----" ... "-----END CERTIFICATE-----" block.',
    );
  }
  if (blocks.length > 1) {
    throw invalid('The certificate field holds more than one PEM block: send only the device certificate.');
  }
  const [, , body = '', endLabel] = certs[0]!;
  if (endLabel !== 'CERTIFICATE') {
    throw invalid('The PEM block starts with BEGIN CERTIFICATE but does not end with END CERTIFICATE.');
  }
  const base64 = body.replace(/\s+/g, '');
  if (!BASE64_BODY.test(base64) || base64.length % 4 !== 0) {
    throw invalid('The PEM certificate body is not valid base64.');
  }
  return Buffer.from(base64, 'base64');
}

const sha256Hex = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** The fingerprint of a PEM certificate: lowercase hex SHA-256 over its DER bytes. Does not validate it. */
export function fingerprintOf(pem: string): string {
  return sha256Hex(pemToDer(pem));
}

function keyTypeOf(key: KeyObject): DeviceKeyType {
  const type = key.asymmetricKeyType;
  if (type === 'ed25519') return 'ed25519';
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'p256';
    throw new DeviceAuthError(
      'unsupported_key',
      `The certificate's key is on curve ${curve ?? 'unknown'}; device keys must be ECDSA P-256 or Ed25519.`,
    );
  }
  throw new DeviceAuthError(
    'unsupported_key',
    `The certificate's key is ${type?.toUpperCase() ?? 'of an unknown type'}; device keys must be ECDSA P-256 or Ed25519.`,
  );
}

/** Parses DER and checks everything about it that does not depend on the time. */
function parseDer(der: Buffer, fingerprint: string): DeviceCertificate {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(der);
  } catch {
    throw invalid('The certificate cannot be parsed as an X.509 certificate.');
  }
  if (!cert.raw.equals(der)) {
    throw invalid('The certificate has extra bytes after its DER encoding: send exactly one certificate.');
  }
  const publicKey = cert.publicKey;
  const keyType = keyTypeOf(publicKey);
  if (cert.issuer !== cert.subject) {
    throw invalid(
      'The certificate is not self-signed (its issuer differs from its subject): present a self-signed device certificate.',
    );
  }
  let signed = false;
  try {
    signed = cert.verify(publicKey);
  } catch {
    signed = false;
  }
  if (!signed) {
    throw invalid(
      "The certificate's signature does not verify with its own public key: it must be self-signed by the device key.",
    );
  }
  return {
    fingerprint,
    publicKey,
    keyType,
    subject: cert.subject,
    serialNumber: cert.serialNumber,
    validFrom: cert.validFromDate,
    validTo: cert.validToDate,
  };
}

function checkValidity(cert: DeviceCertificate, now: Date): void {
  const t = now.getTime();
  if (t < cert.validFrom.getTime()) {
    throw invalid(
      `The certificate is not valid yet (valid from ${cert.validFrom.toISOString()}, server time ${now.toISOString()}): ` +
        "check the device clock or the certificate's notBefore.",
    );
  }
  if (t > cert.validTo.getTime()) {
    throw invalid(
      `The certificate expired at ${cert.validTo.toISOString()} (server time ${now.toISOString()}): ` +
        'create a new device certificate and register again.',
    );
  }
}

// --- Cache: fingerprint → parsed certificate, least recently used first (Map keeps insertion order). ---

let cacheCapacity = 1000;
const cache = new Map<string, DeviceCertificate>();
// The PEM text as received → its fingerprint, so that a known certificate costs one map lookup instead of PEM
// decoding and SHA-256 on every request (same capacity; the text is the key, so a hit is an exact match).
const fingerprints = new Map<string, string>();
let parses = 0;

/** Sizes and counters of the certificate cache, for tests and metrics. */
export function certificateCacheStats(): { size: number; capacity: number; parses: number } {
  return { size: cache.size, capacity: cacheCapacity, parses };
}

/** Empties the certificate cache and resets its parse counter. */
export function clearCertificateCache(): void {
  cache.clear();
  fingerprints.clear();
  parses = 0;
}

/** Sets the cache capacity (default 1000), evicting the least recently used entries; returns the previous one. */
export function setCertificateCacheCapacity(capacity: number): number {
  if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError('capacity must be an integer >= 0');
  const previous = cacheCapacity;
  cacheCapacity = capacity;
  evict();
  return previous;
}

function evict(): void {
  while (cache.size > cacheCapacity) {
    const oldest = cache.keys().next().value as string;
    cache.delete(oldest);
  }
  while (fingerprints.size > cacheCapacity) {
    fingerprints.delete(fingerprints.keys().next().value as string);
  }
}

/**
 * Parses and checks a device certificate: it must parse, carry a P-256 or Ed25519 key (else 400 `unsupported_key`),
 * be self-signed (issuer = subject, and its signature verifies with its own key) and be valid at `now` (else 401
 * `invalid_certificate`). A certificate seen before is served from a bounded LRU cache keyed by fingerprint, which
 * skips parsing and the signature check but not the validity check.
 */
export function parseDeviceCertificate(pem: string, now: Date): DeviceCertificate {
  const known = typeof pem === 'string' ? fingerprints.get(pem) : undefined;
  let parsed = known === undefined ? undefined : cache.get(known);
  if (parsed) {
    cache.delete(parsed.fingerprint);
    cache.set(parsed.fingerprint, parsed);
  } else {
    const der = pemToDer(pem);
    const fingerprint = sha256Hex(der);
    parsed = cache.get(fingerprint);
    if (!parsed) {
      parses++;
      parsed = parseDer(der, fingerprint);
    }
    if (cacheCapacity > 0) {
      cache.delete(fingerprint);
      cache.set(fingerprint, parsed);
      fingerprints.set(pem, fingerprint);
      evict();
    }
  }
  checkValidity(parsed, now);
  // Fresh Date objects, so that a caller cannot change the cached ones.
  return { ...parsed, validFrom: new Date(parsed.validFrom), validTo: new Date(parsed.validTo) };
}
