import { releaseDevice } from '#shared/domain/device-release.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.releaseDevice, async ({ params }, { db, principal, sourceIp }) =>
  ok(
    await releaseDevice(db, params.id, {
      id: principal.subject,
      email: principal.email,
      ipAddress: sourceIp,
    }),
  ),
);
