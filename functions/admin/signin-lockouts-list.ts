import { listSigninLockouts } from '#shared/domain/signin-lockouts.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listSigninLockouts, async ({ query }, { db }) =>
  ok(await listSigninLockouts(db, query)),
);
