import { querierFor } from '#shared/domain/environments/index.ts';
import { environmentSettings } from '#shared/domain/environments/types.ts';
import { runQuery } from '#shared/domain/query-proxy.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

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
