import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listDevices } from '#shared/observability/fleet/fleet.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsListDevices, async ({ query }, { db, config }) =>
  ok(await listDevices(db, config, query)),
);
