import { listCatalog } from '#shared/domain/catalog.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listCatalog, async ({ query }, { db }) =>
  ok(await listCatalog(db, query)),
);
