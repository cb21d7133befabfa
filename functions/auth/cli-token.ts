import { exchangeCliCode } from '#shared/domain/cli-signin.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.cliToken, async ({ body }, { config, db, sourceIp }) =>
  flat(await exchangeCliCode(config, db, body, sourceIp), 200, { 'cache-control': 'no-store' }),
);
