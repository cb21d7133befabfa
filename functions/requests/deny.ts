import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { denyRequest, viewOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.denyRequest, async ({ params, body }, ctx) => {
  const row = await denyRequest(ctx.db, params.id, body.reason, ctx.principal, ctx.sourceIp);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
