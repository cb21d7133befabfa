import { createUser } from '#shared/domain/users.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { created } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.createUser, async ({ body }, { db, principal, sourceIp }) =>
  created(await createUser(db, body, { id: principal.subject, email: principal.email, ipAddress: sourceIp })),
);
