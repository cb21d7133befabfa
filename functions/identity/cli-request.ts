import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { readCliSignin } from '#shared/identity/cli-sign-in.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.getCliRequest, async ({ params }, { db }) =>
  ok(await readCliSignin(db, params.id)),
);
