import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listRequests } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.listOwnRequests, async ({ query }, { db, config, principal }) =>
  ok(await listRequests(db, config, { ...query, requester_id: principal.subject })),
);
