import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';
import { loginWithPassword } from '#shared/identity/sign-in.ts';

export const handler = httpHandler(routes.login, async ({ body }, { config, db, sourceIp }) =>
  ok(await loginWithPassword(config, db, body.email, body.password, sourceIp)),
);
