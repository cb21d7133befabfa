import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { getSession } from '#shared/observability/events/events.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';

export const handler = httpHandler(routes.obsGetSession, async ({ params, query }, { db, config }) =>
  ok(await getSession(db, config, params.session_id, query)),
);
