import { listEvents } from '#shared/domain/observability-events.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsListEvents, async ({ query }, { db, config }) =>
  ok(await listEvents(db, config, query)),
);
