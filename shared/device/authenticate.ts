import { createHash } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { queryRows } from '../db/query.ts';
import { textParam } from '../db/sql-values.ts';
import { HttpError, unauthorized } from '../http/errors.ts';
import type { Authenticator, RequestContext } from '../http/handler.ts';
import { invalidField } from '../http/validation.ts';
import { DeviceAuthError } from './certificate.ts';
import { InvalidTimestampError } from './freshness.ts';
import { verifySignedDeviceRequest } from './verify-request.ts';

export const SIGNATURE_HEADER = 'x-device-signature';

function toHttp(err: unknown): unknown {
  if (err instanceof DeviceAuthError) return new HttpError(err.status, err.code, err.message);
  if (err instanceof InvalidTimestampError) return invalidField('body', ['clientTimestamp'], err.message);
  return err;
}

/**
 * Where the enrolled device a certificate belongs to is found (every route but register needs one):
 * - `none`: not at all (register creates or rotates it);
 * - `in-write`: by the handler's own write, which reads the device by fingerprint in the same statement and answers
 *   401 unknown_device itself (one database call per request instead of a lookup and a write). A body the stack
 *   rejects (413, 400) is looked up first, so an unenrolled certificate is 401 unknown_device before anything about
 *   its body is said.
 */
export type Enrollment = 'none' | 'in-write';

export const unknownDevice = () =>
  unauthorized(
    'No enrolled device has this certificate (never registered, or replaced by a newer one): register again.',
    'unknown_device',
  );

/**
 * The enrolled device a certificate fingerprint belongs to (its id and serial number; no row: none): the `d` of the
 * writes that check enrollment themselves (events, inventory), and the lookup before a refused body.
 */
export const enrolledDeviceSql = (fingerprint: SQL): SQL =>
  sql`SELECT id, serial_number FROM devices WHERE certificate_fingerprint = ${fingerprint}`;

/** Refuses a verified certificate that no enrolled device has (401 unknown_device). */
async function checkEnrolled(ctx: RequestContext): Promise<void> {
  const fingerprint = ctx.device?.fingerprint;
  if (!fingerprint) throw new Error('checkEnrolled runs after the signature is verified');
  const rows = await queryRows<{ id: string }>(ctx.db, enrolledDeviceSql(textParam(fingerprint)));
  if (rows.length === 0) throw unknownDevice();
}

/**
 * The device side of the middy stack (device-protocol.md): verifies the certificate and the signature over the
 * RFC 8785 canonical body (first over the body bytes as received: see verifySignedDeviceRequest), checks freshness,
 * and finds the enrolled device as `enrollment` says (401 unknown_device, also for a rotated-away certificate).
 * Replay refusal happens in the write itself, so that a request that fails stores nothing, not even its signature.
 */
export function deviceAuthenticator(options: {
  signatureInBody: boolean;
  enrollment: Enrollment;
}): Authenticator {
  const authenticate: Authenticator = async (ctx: RequestContext, rawBody: unknown) => {
    const signature = options.signatureInBody
      ? (rawBody as { signature?: unknown } | undefined)?.signature
      : ctx.headers[SIGNATURE_HEADER];
    if (typeof signature !== 'string' || signature.length === 0) {
      throw unauthorized(
        options.signatureInBody
          ? 'The body has no signature.'
          : 'The X-Device-Signature header is missing: sign the canonical body with the device key.',
        'invalid_signature',
      );
    }
    const now = new Date();
    let verified: ReturnType<typeof verifySignedDeviceRequest>;
    try {
      verified = verifySignedDeviceRequest({
        body: rawBody,
        rawBody: ctx.rawBody,
        signature,
        signatureInBody: options.signatureInBody,
        now,
        maxSkewMs: ctx.config.device.max_clock_skew,
      });
    } catch (err) {
      throw toHttp(err);
    }
    const { certificate } = verified;
    ctx.device = {
      fingerprint: certificate.fingerprint,
      keyType: certificate.keyType,
      certificatePem: (rawBody as { certificate: string }).certificate,
      notBefore: certificate.validFrom,
      notAfter: certificate.validTo,
      signatureHash: createHash('sha256').update(verified.signatureBytes).digest('hex'),
      replayUntil: new Date(verified.clientTimestamp.getTime() + ctx.config.device.max_clock_skew),
    };
  };
  if (options.enrollment === 'in-write') authenticate.beforeBodyRejected = checkEnrolled;
  return authenticate;
}

export const replayedRequest = () =>
  unauthorized(
    'This signature was already used: sign every request anew with a fresh clientTimestamp.',
    'replayed_request',
  );
