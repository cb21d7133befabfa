// Rows of the route table for fleet alerts (docs/policy.md, "Alerts"): the admin list, one alert with its devices,
// the acknowledgement, and the webhook deliveries (the dead-letter list). Merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import {
  acknowledgeAlertBody,
  acknowledgedAlertResponse,
  alertIdParams,
  alertListResponse,
  alertResponse,
  deliveryListResponse,
  listAlertsQuery,
  listDeliveriesQuery,
} from './schemas.ts';

export const listAlerts = defineRoute({
  method: 'GET',
  path: '/v1/admin/alerts',
  handler: 'alerts/admin',
  auth: 'admin',
  tags: ['alerts'],
  summary:
    'Fleet alerts, newest first: one per change (kind and subject) with the number of devices it covers',
  query: listAlertsQuery,
  response: alertListResponse,
});

export const listAlertDeliveries = defineRoute({
  method: 'GET',
  path: '/v1/admin/alerts/deliveries',
  handler: 'alerts/admin',
  auth: 'admin',
  tags: ['alerts'],
  summary:
    'Webhook deliveries of alerts by status; by default the dead letters (failed alerts.delivery.max_attempts times)',
  query: listDeliveriesQuery,
  response: deliveryListResponse,
});

export const getAlert = defineRoute({
  method: 'GET',
  path: '/v1/admin/alerts/{id}',
  handler: 'alerts/admin',
  auth: 'admin',
  tags: ['alerts'],
  summary: 'One alert with the devices it covers',
  params: alertIdParams,
  response: alertResponse,
  errors: [404],
});

export const acknowledgeAlert = defineRoute({
  method: 'POST',
  path: '/v1/admin/alerts/{id}/acknowledge',
  handler: 'alerts/admin',
  auth: 'admin',
  kind: 'write',
  tags: ['alerts'],
  summary: 'Acknowledge an open alert, with an optional note (audited alert.acknowledged with who)',
  description:
    'An alert already acknowledged is 409 alert_acknowledged. Devices that report the same change later still join it.',
  params: alertIdParams,
  body: acknowledgeAlertBody,
  response: acknowledgedAlertResponse,
  errors: [404, 409],
});

export const alertRoutes = {
  listAlerts,
  listAlertDeliveries,
  getAlert,
  acknowledgeAlert,
} satisfies Record<string, RouteSpec>;
