import { httpHandler } from '#shared/core/http/handler.ts';
import { redirect } from '#shared/core/http/reply.ts';
import { startCliSignin } from '#shared/identity/cli-sign-in.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(
  routes.cliAuthorize,
  async ({ query }, { config, db, sourceIp, headers }) =>
    redirect(await startCliSignin(config, db, query, { sourceIp, userAgent: headers['user-agent'] })),
);
