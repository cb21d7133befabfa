import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listEvents } from '#shared/observability/events/events.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsListEvents, async ({ query }, { db, config }) =>
  ok(await listEvents(db, config, query)),
);
