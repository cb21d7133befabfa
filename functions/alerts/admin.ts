// The admin routes of fleet alerts (shared/alerts/routes.ts), one function for all of them.
import { acknowledgeAlert, getAlert, listAlerts, listDeliveries } from '#shared/alerts/alerts.ts';
import { alertRoutes as routes } from '#shared/alerts/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { routedHandler } from '#shared/core/http/routed.ts';
import { actorOf } from '#shared/requests/requests.ts';

export const handler = routedHandler([
  [
    routes.listAlerts,
    httpHandler(routes.listAlerts, async ({ query }, { db, config }) =>
      ok(await listAlerts(db, config, query)),
    ),
  ],
  [
    routes.listAlertDeliveries,
    httpHandler(routes.listAlertDeliveries, async ({ query }, { db, config }) =>
      ok(await listDeliveries(db, config, query)),
    ),
  ],
  [
    routes.getAlert,
    httpHandler(routes.getAlert, async ({ params }, { db }) => ok(await getAlert(db, params.id))),
  ],
  [
    routes.acknowledgeAlert,
    httpHandler(routes.acknowledgeAlert, async ({ params, body }, { db, principal, sourceIp }) =>
      ok(await acknowledgeAlert(db, params.id, body, actorOf(principal, sourceIp))),
    ),
  ],
]);
