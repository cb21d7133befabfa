import { httpHandler } from '#shared/core/http/handler.ts';
import { created } from '#shared/core/http/reply.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';
import { createUser } from '#shared/identity/users.ts';

export const handler = httpHandler(routes.createUser, async ({ body }, { db, principal, sourceIp }) =>
  created(await createUser(db, body, { id: principal.subject, email: principal.email, ipAddress: sourceIp })),
);
