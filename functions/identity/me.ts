import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { identityRoutes as routes } from '#shared/identity/routes.ts';

export const handler = httpHandler(routes.me, async (_input, { principal }) => {
  const p = principal;
  return ok({ subject: p.subject, email: p.email, name: p.name, roles: p.roles, token_use: p.tokenUse });
});
