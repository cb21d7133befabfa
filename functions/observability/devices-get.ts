import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { getDevice } from '#shared/observability/fleet/fleet.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsGetDevice, async ({ params }, { db, config }) =>
  ok(await getDevice(db, config, params.id)),
);
