import { createCatalogEntry } from '#shared/catalog/catalog.ts';
import { catalogRoutes as routes } from '#shared/catalog/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { created } from '#shared/core/http/reply.ts';
import { actorOf } from '#shared/requests/requests.ts';

export const handler = httpHandler(routes.createCatalogEntry, async ({ body }, { db, principal, sourceIp }) =>
  created(await createCatalogEntry(db, body, actorOf(principal, sourceIp))),
);
