import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { clearSigninLockout } from '#shared/identity/lockouts.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(
  routes.clearSigninLockout,
  async ({ params }, { db, principal, sourceIp }) =>
    ok(
      await clearSigninLockout(db, params.id, {
        id: principal.subject,
        email: principal.email,
        ipAddress: sourceIp,
      }),
    ),
);
