import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { providerFor } from '#shared/requests/environments.ts';
import { provisionAfterApproval } from '#shared/requests/lifecycle.ts';
import { approveRequest, viewOf } from '#shared/requests/requests.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

// Approve, then provision: the answer is active, or approved with environment_status = failed and tunnel.last_error.
export const handler = httpHandler(routes.approveRequest, async ({ params, body }, ctx) => {
  const approved = await approveRequest(ctx.db, params.id, body.notes, ctx.principal, ctx.sourceIp);
  const row = await provisionAfterApproval(ctx.db, providerFor(ctx.runtime.database, ctx.config), approved);
  return ok(await viewOf(ctx.db, row, ctx.config));
});
