import { providerFor } from '#shared/domain/environments/index.ts';
import { revokeRequest, viewOf } from '#shared/domain/requests.ts';
import { teardownEnvironment } from '#shared/domain/requests-lifecycle.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.revokeRequest, async ({ params, body }, ctx) => {
  const revoked = await revokeRequest(ctx.db, params.id, body.reason, ctx.principal, ctx.sourceIp);
  const row = await teardownEnvironment(ctx.db, providerFor(ctx.runtime.database, ctx.config), revoked);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
