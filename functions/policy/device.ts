import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { deviceSignature } from '#shared/devices/device-signature.ts';
import { fetchDevicePolicy } from '#shared/policy/policy.ts';
import { policyRoutes as routes } from '#shared/policy/routes.ts';

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
