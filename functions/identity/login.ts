import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { loginWithPassword } from '#shared/identity/sign-in.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.login, async ({ body }, { config, db, sourceIp }) =>
  ok(await loginWithPassword(config, db, body.email, body.password, sourceIp)),
);
