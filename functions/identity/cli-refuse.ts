import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { refuseCliSignin } from '#shared/identity/cli-sign-in.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.cliRefuse, async ({ body }, { db, principal, sourceIp }) =>
  ok(await refuseCliSignin(db, body.request, principal, sourceIp)),
);
