import { getEvent } from '#shared/domain/observability-events.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsGetEvent, async ({ params }, { db }) =>
  ok(await getEvent(db, params.id)),
);
