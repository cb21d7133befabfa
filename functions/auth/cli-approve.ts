import { approveCliSignin } from '#shared/domain/cli-signin.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.cliApprove, async ({ body }, { db, principal, sourceIp }) =>
  ok(await approveCliSignin(db, body.request, principal, sourceIp)),
);
