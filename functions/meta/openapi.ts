import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { buildOpenApi } from '#shared/meta/openapi.ts';
import { metaRoutes as routes } from '#shared/meta/routes.ts';

let document: unknown;

export const handler = httpHandler(routes.openapi, async (_input, { config }) => {
  document ??= buildOpenApi(config);
  return flat(document, 200, { 'cache-control': 'public, max-age=300' });
});
