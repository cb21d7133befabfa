import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { getEvent } from '#shared/observability/events/events.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsGetEvent, async ({ params }, { db }) =>
  ok(await getEvent(db, params.id)),
);
