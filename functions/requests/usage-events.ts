import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listUsageEvents } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.listUsageEvents, async ({ params, query }, { db, principal }) =>
  ok(await listUsageEvents(db, params.id, principal, query)),
);
