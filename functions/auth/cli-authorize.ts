import { startCliSignin } from '#shared/domain/cli-signin.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { redirect } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(
  routes.cliAuthorize,
  async ({ query }, { config, db, sourceIp, headers }) =>
    redirect(await startCliSignin(config, db, query, { sourceIp, userAgent: headers['user-agent'] })),
);
