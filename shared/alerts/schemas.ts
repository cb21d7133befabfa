// Query, path, body and response schemas of the admin alert routes (docs/policy.md, "Alerts"): the list with its
// filters and keyset cursor, one alert with its devices, the acknowledgement, and the webhook dead-letter list.
import * as z from 'zod';
import { ALERT_KINDS, ALERT_STATUSES } from '../core/db/schema.ts';
import { envelope, isoTimestamp } from '../core/schemas/common.ts';
import { nullAsAbsent } from '../core/schemas/input-rules.ts';
import { cursor, limit, page } from '../observability/schemas.ts';

export { ALERT_KINDS, ALERT_STATUSES };
export type AlertKind = (typeof ALERT_KINDS)[number];

export const listAlertsQuery = z.object({
  kind: z.enum(ALERT_KINDS).optional(),
  status: z.enum(ALERT_STATUSES).optional(),
  limit,
  cursor,
});
export type ListAlertsQuery = z.output<typeof listAlertsQuery>;

export const alertIdParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

export const acknowledgeAlertBody = nullAsAbsent(
  z.object({
    note: z
      .string()
      .trim()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'Why, or what was done: kept on the alert and in the audit record' }),
  }),
);
export type AcknowledgeAlertBody = z.output<typeof acknowledgeAlertBody>;

export const alertView = z
  .object({
    id: z.uuid(),
    kind: z.enum(ALERT_KINDS).meta({
      description:
        'new_server, version_changed, source_changed, denied_server, denied_spike, tool_definition_changed (docs/policy.md)',
    }),
    subject: z.string().meta({ description: 'What changed: alerts are one per (kind, subject)' }),
    status: z.enum(ALERT_STATUSES),
    details: z
      .record(z.string(), z.unknown())
      .meta({ description: 'Per kind: see docs/policy.md, "Alerts"' }),
    device_count: z.number().int().min(0).meta({ description: 'Devices the alert covers' }),
    first_seen_at: isoTimestamp,
    last_seen_at: isoTimestamp.meta({
      description: 'When a pass last found it (a device still reporting it)',
    }),
    acknowledged_at: isoTimestamp.nullable(),
    acknowledged_by: z
      .string()
      .nullable()
      .meta({ description: 'The email of the admin who acknowledged it' }),
    acknowledge_note: z.string().nullable(),
  })
  .meta({ id: 'Alert' });
export type AlertView = z.output<typeof alertView>;

export const alertDevice = z.object({
  device_id: z.uuid(),
  serial_number: z.string(),
  owner_email: z.string(),
  first_seen_at: isoTimestamp.meta({ description: 'When the alert first counted this device' }),
});

/** How many devices GET /v1/admin/alerts/{id} lists (device_count counts them all). */
export const ALERT_DEVICES_SHOWN = 500;

export const alertListResponse = envelope(z.object({ alerts: z.array(alertView), ...page }));
export const alertResponse = envelope(
  alertView.extend({
    devices: z.array(alertDevice).meta({
      description: `The first ${ALERT_DEVICES_SHOWN} devices, in the order the alert counted them`,
    }),
  }),
);
export const acknowledgedAlertResponse = envelope(alertView);

export const listDeliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'dead']).default('dead'),
  limit,
  cursor,
});
export type ListDeliveriesQuery = z.output<typeof listDeliveriesQuery>;

export const deliveryView = z
  .object({
    id: z.uuid(),
    alert_id: z.uuid(),
    destination: z.string().meta({ description: 'The name of the webhook (alerts.webhooks)' }),
    event: z.string().meta({ description: 'alert.opened' }),
    status: z.enum(['pending', 'delivered', 'dead']),
    attempts: z.number().int(),
    next_attempt_at: isoTimestamp,
    last_error: z
      .string()
      .nullable()
      .meta({ description: 'The last failure: an HTTP status or a network error' }),
    created_at: isoTimestamp,
    finished_at: isoTimestamp.nullable(),
  })
  .meta({ id: 'AlertDelivery' });
export const deliveryListResponse = envelope(z.object({ deliveries: z.array(deliveryView), ...page }));
