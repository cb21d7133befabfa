import { getCatalogEntry } from '#shared/domain/catalog.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.getCatalogEntry, async ({ params }, { db }) =>
  ok(await getCatalogEntry(db, params.id)),
);
