import { getSession } from '#shared/domain/observability-events.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsGetSession, async ({ params, query }, { db, config }) =>
  ok(await getSession(db, config, params.session_id, query)),
);
