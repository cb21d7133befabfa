import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { exchangeCliCode } from '#shared/identity/cli-sign-in.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.cliToken, async ({ body }, { config, db, sourceIp }) =>
  flat(await exchangeCliCode(config, db, body, sourceIp), 200, { 'cache-control': 'no-store' }),
);
