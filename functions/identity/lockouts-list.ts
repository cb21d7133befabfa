import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listSigninLockouts } from '#shared/identity/lockouts.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.listSigninLockouts, async ({ query }, { db }) =>
  ok(await listSigninLockouts(db, query)),
);
