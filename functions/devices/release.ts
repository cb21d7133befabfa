import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { releaseDevice } from '#shared/devices/release.ts';
import { deviceRoutes as routes } from '#shared/devices/routes.ts';

export const handler = httpHandler(routes.releaseDevice, async ({ params }, { db, principal, sourceIp }) =>
  ok(
    await releaseDevice(db, params.id, {
      id: principal.subject,
      email: principal.email,
      ipAddress: sourceIp,
    }),
  ),
);
