import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { fleetSummary } from '#shared/observability/fleet/fleet.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsFleetSummary, async (_input, { db, config }) =>
  ok(await fleetSummary(db, config)),
);
