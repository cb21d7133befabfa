import { getCatalogEntry } from '#shared/catalog/catalog.ts';
import { catalogRoutes as routes } from '#shared/catalog/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';

export const handler = httpHandler(routes.getCatalogEntry, async ({ params }, { db }) =>
  ok(await getCatalogEntry(db, params.id)),
);
