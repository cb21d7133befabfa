import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listUsers } from '#shared/identity/users.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listUsers, async ({ query }, { db }) =>
  ok(await listUsers(db, query)),
);
