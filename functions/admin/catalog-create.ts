import { createCatalogEntry } from '#shared/domain/catalog.ts';
import { actorOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { created } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.createCatalogEntry, async ({ body }, { db, principal, sourceIp }) =>
  created(await createCatalogEntry(db, body, actorOf(principal, sourceIp))),
);
