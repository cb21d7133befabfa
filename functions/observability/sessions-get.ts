import { getSession } from '#shared/domain/observability-events.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsGetSession, async ({ params, query }, { db }) =>
  ok(await getSession(db, params.session_id, query)),
);
