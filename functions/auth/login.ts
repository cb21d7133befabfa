import { loginWithPassword } from '#shared/domain/sign-in.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.login, async ({ body }, { config, db, sourceIp }) =>
  ok(await loginWithPassword(config, db, body.email, body.password, sourceIp)),
);
