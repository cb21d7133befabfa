import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { environmentSettings } from '#shared/requests/environments/types.ts';
import { querierFor } from '#shared/requests/environments.ts';
import { runQuery } from '#shared/requests/query/proxy.ts';
import { requestRoutes as routes } from '#shared/requests/routes.ts';

// The spec's body is {data: <proxied result>} (no success member).
export const handler = httpHandler(routes.queryRequest, async ({ params, body }, ctx) => {
  const provider = querierFor(ctx.runtime.database, ctx.config);
  const limits = environmentSettings(ctx.config).query;
  return flat({
    data: await runQuery(
      ctx.runtime.database,
      provider,
      limits,
      params.id,
      body.sql,
      ctx.principal,
      ctx.sourceIp,
    ),
  });
});
