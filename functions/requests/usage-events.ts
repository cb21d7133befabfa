import { listUsageEvents } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listUsageEvents, async ({ params, query }, { db, principal }) =>
  ok(await listUsageEvents(db, params.id, principal, query)),
);
