import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';
import { listUsers } from '#shared/identity/users.ts';

export const handler = httpHandler(routes.listUsers, async ({ query }, { db }) =>
  ok(await listUsers(db, query)),
);
