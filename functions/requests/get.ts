import { requestVisibleTo, viewOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.getRequest, async ({ params }, { db, config, principal }) =>
  ok(await viewOf(db, await requestVisibleTo(db, params.id, principal), config)),
);
