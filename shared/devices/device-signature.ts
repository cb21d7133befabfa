// The device side of a request (docs/device-protocol.md): the certificate and the signature over the RFC 8785
// canonical body (first over the body bytes as received), the freshness of clientTimestamp, and, for the routes
// whose write finds the enrolled device itself, that lookup before a refused body (so an unenrolled certificate is
// 401 unknown_device before anything about its body is said). Replay is refused in the write itself, so a request
// that fails stores nothing, not even its signature.
import { createHash } from 'node:crypto';
import { unauthenticated } from '../core/errors.ts';
import { type ServiceMiddleware, stateOf } from '../core/http/middleware/types.ts';
import { invalidField } from '../core/http/validation.ts';
import { assertEnrolled, type Enrollment, SIGNATURE_HEADER } from './enrollment.ts';
import { InvalidTimestampError } from './signing/freshness.ts';
import { verifySignedDeviceRequest } from './signing/verify-request.ts';

export function deviceSignature(options: {
  signatureInBody: boolean;
  enrollment: Enrollment;
}): ServiceMiddleware {
  return {
    name: 'deviceSignature',
    before: async (request) => {
      const state = stateOf(request);
      const body = state.parsedBody;
      const signature = options.signatureInBody
        ? (body as { signature?: unknown } | undefined)?.signature
        : state.headers[SIGNATURE_HEADER];
      if (typeof signature !== 'string' || signature.length === 0) {
        throw unauthenticated(
          options.signatureInBody
            ? 'The body has no signature.'
            : 'The X-Device-Signature header is missing: sign the canonical body with the device key.',
          'invalid_signature',
        );
      }
      const maxSkewMs = state.config.device.max_clock_skew;
      let verified: ReturnType<typeof verifySignedDeviceRequest>;
      try {
        verified = verifySignedDeviceRequest({
          body,
          rawBody: state.rawBody,
          signature,
          signatureInBody: options.signatureInBody,
          now: new Date(),
          maxSkewMs,
        });
      } catch (err) {
        // A timestamp that is not RFC 3339 is a validation problem of a request the device did sign.
        if (err instanceof InvalidTimestampError)
          throw invalidField('body', ['clientTimestamp'], err.message);
        throw err;
      }
      const { certificate } = verified;
      const device = {
        fingerprint: certificate.fingerprint,
        keyType: certificate.keyType,
        certificatePem: (body as { certificate: string }).certificate,
        notBefore: certificate.validFrom,
        notAfter: certificate.validTo,
        signatureHash: createHash('sha256').update(verified.signatureBytes).digest('hex'),
        replayUntil: new Date(verified.clientTimestamp.getTime() + maxSkewMs),
      };
      request.context.device = device;
      if (options.enrollment === 'in-write') {
        request.context.beforeBodyRejected = () => assertEnrolled(state.db, device.fingerprint);
      }
    },
  };
}
