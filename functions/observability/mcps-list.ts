import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listMcps } from '#shared/observability/fleet/fleet.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsListMcps, async ({ query }, { db, config }) =>
  ok(await listMcps(db, config, query)),
);
