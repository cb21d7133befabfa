// What the device authenticator hands ingest for a request it verified, for tests and benchmarks that call
// ingestEvents directly (the signature itself is the device tests' concern).
import { randomUUID } from 'node:crypto';
import type { VerifiedDeviceRequest } from '#shared/core/http/context.ts';

/** A verified request of the device with certificate `fingerprint`, each with a signature of its own. */
export const verifiedDevice = (fingerprint: string): VerifiedDeviceRequest => ({
  fingerprint,
  keyType: 'p256',
  certificatePem: 'pem',
  notBefore: new Date(),
  notAfter: new Date(),
  signatureHash: randomUUID(),
  replayUntil: new Date(Date.now() + 600_000),
});
