import * as z from 'zod';
import { AUDIT_SOURCES } from '../core/db/schema.ts';
import { envelope, isoTimestamp, pageEnvelope } from '../core/schemas/common.ts';
import { cappedPagination, lenientQuery } from '../core/schemas/input-rules.ts';

export const auditLogView = z
  .object({
    id: z.string(),
    action_type: z.string(),
    actor_email: z.string(),
    actor_id: z.string(),
    app_name: z.string(),
    container_id: z.string(),
    environment_id: z.string(),
    environment_name: z.string(),
    ip_address: z.string(),
    level: z.string(),
    resource_id: z.string(),
    resource_type: z.string(),
    resource_name: z.string().nullable().meta({
      description:
        "The resource's name where it still exists: a device's serial number, a user's email, a request's title, a catalog entry's data source; null for other resources and for ones since deleted",
    }),
    stage: z.string(),
    source: z.enum(AUDIT_SOURCES),
    timestamp: isoTimestamp,
    created_at: isoTimestamp,
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditLog' });

/**
 * What devices and the schedule write on their own, many times a day in a large fleet: a laptop's first
 * registration, a key rotation, a dropped partition. `routine=hide` leaves them out.
 */
export const ROUTINE_ACTIONS = [
  'device.registered',
  'device.key_rotated',
  'events.partition_dropped',
] as const;

/**
 * The spec lists no 400 for this list, so no parameter is refused (shared/core/schemas/input-rules.ts): limit and offset
 * are capped, an unknown source matches nothing, an unknown sort is the default, unknown parameters are ignored.
 */
export const listAuditLogsQuery = z.object({
  action_type: lenientQuery.text(),
  actor_email: lenientQuery.text(),
  resource_type: lenientQuery.text(),
  resource_id: lenientQuery.text(),
  source: lenientQuery.filter(AUDIT_SOURCES),
  routine: lenientQuery.choice(['show', 'hide'], 'show').meta({
    description: `Default show; hide leaves out the routine records (${ROUTINE_ACTIONS.join(', ')}); another value is the default`,
  }),
  sort: lenientQuery.choice(['timestamp', '-timestamp', 'created_at', '-created_at'], '-created_at'),
  ...cappedPagination,
});
export type ListAuditLogsQuery = z.output<typeof listAuditLogsQuery>;

export const auditLogListResponse = pageEnvelope('logs', auditLogView);

export const auditActionsResponse = envelope(
  z.object({
    actions: z
      .array(z.object({ action_type: z.string(), records: z.number().int().min(1) }))
      .meta({ description: 'Every action type in the audit log with its number of records, by name' }),
  }),
);

/** Records per export page: a page stays well under a Lambda response's size. */
export const MAX_EXPORT_PAGE = 1000;
export const exportAuditLogsQuery = z
  .object({
    after_seq: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0).meta({
      description: 'The records after this seq (0: from the first); the next page starts after the last line',
    }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_EXPORT_PAGE)
      .default(MAX_EXPORT_PAGE)
      .meta({
        description: `Records in the page, 1..${MAX_EXPORT_PAGE}; fewer lines than this: the chain's end`,
      }),
  })
  .strict();
