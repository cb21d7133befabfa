import { fetchDevicePolicy } from '#shared/domain/policy.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { deviceSignature } from '#shared/http/middleware/device-signature.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

// 304 has no body (RFC 9110 15.4.5); its ETag still names the version the device holds.
export const handler = httpHandler(
  routes.fetchDevicePolicy,
  async ({ body }, { db, device, headers }) => {
    const answer = await fetchDevicePolicy(db, device, body.etag ?? headers['if-none-match']);
    const cache = { etag: answer.etag, 'cache-control': 'no-cache' };
    return answer.notModified
      ? { status: 304, envelope: false, headers: cache }
      : flat(answer.body, 200, cache);
  },
  { deviceAuth: deviceSignature({ signatureInBody: false, enrollment: 'in-write' }) },
);
