import { listRequests } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listOwnRequests, async ({ query }, { db, config, principal }) =>
  ok(await listRequests(db, config, { ...query, requester_id: principal.subject })),
);
