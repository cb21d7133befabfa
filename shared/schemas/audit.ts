import * as z from 'zod';
import { AUDIT_SOURCES } from '../db/schema.ts';
import { isoTimestamp, pageEnvelope } from './common.ts';
import { cappedPagination, lenientQuery } from './input-rules.ts';

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
    stage: z.string(),
    source: z.enum(AUDIT_SOURCES),
    timestamp: isoTimestamp,
    created_at: isoTimestamp,
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditLog' });

/**
 * The spec lists no 400 for this list, so no parameter is refused (shared/schemas/input-rules.ts): limit and offset
 * are capped, an unknown source matches nothing, an unknown sort is the default, unknown parameters are ignored.
 */
export const listAuditLogsQuery = z.object({
  action_type: lenientQuery.text(),
  actor_email: lenientQuery.text(),
  resource_type: lenientQuery.text(),
  resource_id: lenientQuery.text(),
  source: lenientQuery.filter(AUDIT_SOURCES),
  sort: lenientQuery.choice(['timestamp', '-timestamp', 'created_at', '-created_at'], '-created_at'),
  ...cappedPagination,
});
export type ListAuditLogsQuery = z.output<typeof listAuditLogsQuery>;

export const auditLogListResponse = pageEnvelope('logs', auditLogView);
