import { providerFor } from '#shared/domain/environments/index.ts';
import { viewOf } from '#shared/domain/requests.ts';
import { retryProvisioning } from '#shared/domain/requests-lifecycle.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.retryProvisioning, async ({ params }, ctx) => {
  const provider = providerFor(ctx.runtime.database, ctx.config);
  const row = await retryProvisioning(ctx.db, provider, params.id, ctx.principal, ctx.sourceIp);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
