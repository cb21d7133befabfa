import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { requestVisibleTo, viewOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.getRequest, async ({ params }, { db, config, principal }) =>
  ok(await viewOf(db, await requestVisibleTo(db, params.id, principal), config)),
);
