import { listCatalog } from '#shared/catalog/catalog.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listCatalog, async ({ query }, { db }) =>
  ok(await listCatalog(db, query)),
);
