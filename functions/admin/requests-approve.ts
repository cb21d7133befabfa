import { providerFor } from '#shared/domain/environments/index.ts';
import { approveRequest, viewOf } from '#shared/domain/requests.ts';
import { provisionAfterApproval } from '#shared/domain/requests-lifecycle.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

// Approve, then provision: the answer is active, or approved with environment_status = failed and tunnel.last_error.
export const handler = httpHandler(routes.approveRequest, async ({ params, body }, ctx) => {
  const approved = await approveRequest(ctx.db, params.id, body.notes, ctx.principal, ctx.sourceIp);
  const row = await provisionAfterApproval(ctx.db, providerFor(ctx.runtime.database, ctx.config), approved);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
