import { createRequest, idempotencyKeyOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

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
