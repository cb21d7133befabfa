import { clearSigninLockout } from '#shared/domain/signin-lockouts.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

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
