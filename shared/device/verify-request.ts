import { CanonicalizationError, canonicalBytes } from './canonical-json.ts';
import { DeviceAuthError, type DeviceCertificate, parseDeviceCertificate } from './certificate.ts';
import { checkClientTimestamp, parseRfc3339 } from './freshness.ts';
import { decodeSignature, verifyDeviceSignature } from './signature.ts';

export interface VerifiedSignedDeviceRequest {
  /** The device certificate from the body, parsed and checked. */
  certificate: DeviceCertificate;
  /** The bytes that were signed: RFC 8785 canonical JSON of the body (without `signature` when it was in it). */
  canonical: Buffer;
  clientTimestamp: Date;
  /**
   * The signature bytes in canonical form (ECDSA: low-S), so that the two valid encodings of one ECDSA signature
   * give the same replay key. Hash these to refuse a second use (replay is the caller's: it needs storage).
   */
  signatureBytes: Buffer;
}

/**
 * Verifies a signed device request (device-protocol.md, "Canonical payload and signature"), in this order:
 * 1. `clientTimestamp` is an RFC 3339 date-time (else InvalidTimestampError: a 400 validation problem);
 * 2. `certificate` is a valid self-signed P-256/Ed25519 certificate at `now` (`invalid_certificate` /
 *    `unsupported_key`);
 * 3. `signature` verifies over the canonical body, from which the member `signature` is removed when
 *    `signatureInBody` (`invalid_signature`);
 * 4. `clientTimestamp` lies within `maxSkewMs` of `now` (`stale_timestamp`), checked after the signature so that the
 *    answer is only "too old" for a request the device really signed.
 * `body` is the request body exactly as parsed from JSON.
 */
export function verifySignedDeviceRequest(input: {
  body: unknown;
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
  parseRfc3339(fields.clientTimestamp as string);
  const certificate = parseDeviceCertificate(fields.certificate as string, input.now);
  const decoded = decodeSignature(input.signature);

  let signed: Record<string, unknown> = fields;
  if (input.signatureInBody) {
    signed = { ...fields };
    delete signed.signature;
  }
  let canonical: Buffer;
  try {
    canonical = canonicalBytes(signed);
  } catch (err) {
    if (!(err instanceof CanonicalizationError)) throw err;
    throw new DeviceAuthError(
      'invalid_signature',
      `The body has no RFC 8785 canonical form, so no signature over it can verify: ${err.message}`,
    );
  }
  const signatureBytes = verifyDeviceSignature({
    publicKey: certificate.publicKey,
    keyType: certificate.keyType,
    payload: canonical,
    signature: decoded,
  });
  const clientTimestamp = checkClientTimestamp(fields.clientTimestamp as string, input.now, input.maxSkewMs);
  return { certificate, canonical, clientTimestamp, signatureBytes };
}
