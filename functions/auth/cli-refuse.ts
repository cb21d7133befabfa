import { refuseCliSignin } from '#shared/domain/cli-signin.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.cliRefuse, async ({ body }, { db, principal, sourceIp }) =>
  ok(await refuseCliSignin(db, body.request, principal, sourceIp)),
);
