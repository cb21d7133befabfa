import { updateCatalogEntry } from '#shared/catalog/catalog.ts';
import { catalogRoutes as routes } from '#shared/catalog/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { actorOf } from '#shared/requests/requests.ts';

// The spec returns the updated entry unwrapped (no {success, data} envelope).
export const handler = httpHandler(
  routes.updateCatalogEntry,
  async ({ params, body }, { db, principal, sourceIp }) =>
    flat(await updateCatalogEntry(db, params.id, body, actorOf(principal, sourceIp))),
);
