import { updateCatalogEntry } from '#shared/catalog/catalog.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { actorOf } from '#shared/requests/requests.ts';
import { routes } from '#shared/routes.ts';

// The spec returns the updated entry unwrapped (no {success, data} envelope).
export const handler = httpHandler(
  routes.updateCatalogEntry,
  async ({ params, body }, { db, principal, sourceIp }) =>
    flat(await updateCatalogEntry(db, params.id, body, actorOf(principal, sourceIp))),
);
