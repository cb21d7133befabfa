import { updateCatalogEntry } from '#shared/domain/catalog.ts';
import { actorOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

// The spec returns the updated entry unwrapped (no {success, data} envelope).
export const handler = httpHandler(
  routes.updateCatalogEntry,
  async ({ params, body }, { db, principal, sourceIp }) =>
    flat(await updateCatalogEntry(db, params.id, body, actorOf(principal, sourceIp))),
);
