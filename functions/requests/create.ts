import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { createRequest, idempotencyKeyOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

export const handler = httpHandler(routes.createRequest, async ({ body }, ctx) => {
  const { request, replayed } = await createRequest(
    ctx.db,
    ctx.config,
    body,
    ctx.principal,
    ctx.sourceIp,
    idempotencyKeyOf(ctx.headers),
  );
  const reply = ok(request, 201);
  return replayed ? { ...reply, headers: { 'idempotent-replayed': 'true' } } : reply;
});
