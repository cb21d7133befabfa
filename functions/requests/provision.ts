import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { providerFor } from '#shared/requests/environments.ts';
import { retryProvisioning } from '#shared/requests/lifecycle.ts';
import { viewOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.retryProvisioning, async ({ params }, ctx) => {
  const provider = providerFor(ctx.runtime.database, ctx.config);
  const row = await retryProvisioning(ctx.db, provider, params.id, ctx.principal, ctx.sourceIp);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
