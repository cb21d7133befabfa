import { readCliSignin } from '#shared/domain/cli-signin.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.getCliRequest, async ({ params }, { db }) =>
  ok(await readCliSignin(db, params.id)),
);
