import { CanonicalizationError, canonicalBytes } from '../../core/canonical-json.ts';
import { DeviceAuthError, type DeviceCertificate, parseDeviceCertificate } from './certificate.ts';
import { checkFreshness, parseRfc3339 } from './freshness.ts';
import { decodeSignature, tryDeviceSignature, verifyDeviceSignature } from './signature.ts';

export interface VerifiedSignedDeviceRequest {
  /** The device certificate from the body, parsed and checked. */
  certificate: DeviceCertificate;
  /**
   * What the signature verified over: the body bytes exactly as received (`raw`), or the RFC 8785 canonical JSON
   * of the parsed body, without `signature` when it was in it (`canonical`, whose bytes are then in `canonical`).
   */
  via: 'raw' | 'canonical';
  canonical?: Buffer;
  clientTimestamp: Date;
  /**
   * The signature bytes in canonical form (ECDSA: low-S), so that the two valid encodings of one ECDSA signature
   * give the same replay key. Hash these to refuse a second use (replay is the caller's: it needs storage).
   */
  signatureBytes: Buffer;
}

/**
 * Verifies a signed device request (device-protocol.md, "Canonical payload and signature"), in this order:
 * 1. `certificate` is a valid self-signed P-256/Ed25519 certificate at `now` (`invalid_certificate` /
 *    `unsupported_key`);
 * 2. `signature` verifies over the canonical body, from which the member `signature` is removed when
 *    `signatureInBody` (`invalid_signature`);
 * 3. `clientTimestamp` is an RFC 3339 date-time (else InvalidTimestampError: a 400 validation problem) within
 *    `maxSkewMs` of `now` (`stale_timestamp`), checked after the signature so that a request the device did not
 *    sign is answered 401, never with details about its body.
 * `body` is the request body exactly as parsed from JSON.
 *
 * Fast path: when the signature travels in a header and `rawBody` (the body text as received) is given, the
 * signature is first checked over those bytes. An agent that follows the protocol sends the canonical form it
 * signed, so this skips canonicalizing the body (which dominates the cost of a large batch); only when that fails
 * is the parsed body canonicalized and checked again. Every request the protocol accepts is accepted either way.
 */
export function verifySignedDeviceRequest(input: {
  body: unknown;
  rawBody?: string | Buffer | undefined;
  signature: string;
  signatureInBody: boolean;
  now: Date;
  maxSkewMs: number;
}): VerifiedSignedDeviceRequest {
  const { body } = input;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DeviceAuthError(
      'invalid_signature',
      'The body must be a JSON object carrying certificate, clientTimestamp and the signed fields.',
    );
  }
  const fields = body as Record<string, unknown>;
  const certificate = parseDeviceCertificate(fields.certificate as string, input.now);
  const decoded = decodeSignature(input.signature);
  const key = { publicKey: certificate.publicKey, keyType: certificate.keyType };

  let signatureBytes: Buffer | undefined;
  if (!input.signatureInBody && input.rawBody !== undefined) {
    signatureBytes = tryDeviceSignature({ ...key, payload: input.rawBody, signature: decoded });
  }
  let canonical: Buffer | undefined;
  if (!signatureBytes) {
    let unsigned: Record<string, unknown> = fields;
    if (input.signatureInBody) {
      unsigned = { ...fields };
      delete unsigned.signature;
    }
    try {
      canonical = canonicalBytes(unsigned);
    } catch (err) {
      if (!(err instanceof CanonicalizationError)) throw err;
      throw new DeviceAuthError(
        'invalid_signature',
        `The body has no RFC 8785 canonical form, so no signature over it can verify: ${err.message}`,
      );
    }
    signatureBytes = verifyDeviceSignature({ ...key, payload: canonical, signature: decoded });
  }
  const clientTimestamp = checkFreshness(
    parseRfc3339(fields.clientTimestamp as string),
    input.now,
    input.maxSkewMs,
  );
  return canonical
    ? { certificate, via: 'canonical', canonical, clientTimestamp, signatureBytes }
    : { certificate, via: 'raw', clientTimestamp, signatureBytes };
}
