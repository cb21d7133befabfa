import { denyRequest, viewOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.denyRequest, async ({ params, body }, ctx) => {
  const row = await denyRequest(ctx.db, params.id, body.reason, ctx.principal, ctx.sourceIp);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
