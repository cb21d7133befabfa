// The admin routes of export destinations (shared/exports/routes.ts), one function for all of them.
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { routedHandler } from '#shared/core/http/routed.ts';
import { exportRoutes as routes } from '#shared/exports/routes.ts';
import {
  createDestination,
  deleteDestination,
  destinationStatus,
  listDestinations,
  replayDestination,
  updateDestination,
} from '#shared/exports/streams.ts';
import { actorOf } from '#shared/requests/requests.ts';

export const handler = routedHandler([
  [
    routes.listExportDestinations,
    httpHandler(routes.listExportDestinations, async (_input, { db }) => ok(await listDestinations(db))),
  ],
  [
    routes.createExportDestination,
    httpHandler(routes.createExportDestination, async ({ body }, { db, principal, sourceIp }) =>
      ok(await createDestination(db, body, actorOf(principal, sourceIp))),
    ),
  ],
  [
    routes.getExportDestinationStatus,
    httpHandler(routes.getExportDestinationStatus, async ({ params }, { db }) =>
      ok(await destinationStatus(db, params.id)),
    ),
  ],
  [
    routes.updateExportDestination,
    httpHandler(routes.updateExportDestination, async ({ params, body }, { db, principal, sourceIp }) =>
      ok(await updateDestination(db, params.id, body, actorOf(principal, sourceIp))),
    ),
  ],
  [
    routes.deleteExportDestination,
    httpHandler(routes.deleteExportDestination, async ({ params }, { db, principal, sourceIp }) =>
      ok(await deleteDestination(db, params.id, actorOf(principal, sourceIp))),
    ),
  ],
  [
    routes.replayExportDestination,
    httpHandler(routes.replayExportDestination, async ({ params, body }, { db, principal, sourceIp }) =>
      ok(await replayDestination(db, params.id, body.from, actorOf(principal, sourceIp))),
    ),
  ],
]);
