import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { providerFor } from '#shared/requests/environments.ts';
import { teardownEnvironment } from '#shared/requests/lifecycle.ts';
import { revokeRequest, viewOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.revokeRequest, async ({ params, body }, ctx) => {
  const revoked = await revokeRequest(ctx.db, params.id, body.reason, ctx.principal, ctx.sourceIp);
  const row = await teardownEnvironment(ctx.db, providerFor(ctx.runtime.database, ctx.config), revoked);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
