import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { approveCliSignin } from '#shared/identity/cli-sign-in.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.cliApprove, async ({ body }, { db, principal, sourceIp }) =>
  ok(await approveCliSignin(db, body.request, principal, sourceIp)),
);
