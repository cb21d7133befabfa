import { listUsers } from '#shared/domain/users.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listUsers, async ({ query }, { db }) =>
  ok(await listUsers(db, query)),
);
