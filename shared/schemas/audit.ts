import * as z from 'zod';
import { AUDIT_SOURCES } from '../db/schema.ts';
import { isoTimestamp, pageEnvelope, pagination } from './common.ts';

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

const filter = z.string().min(1).max(320).optional();

export const listAuditLogsQuery = z.object({
  action_type: filter,
  actor_email: filter,
  resource_type: filter,
  resource_id: filter,
  source: z.enum(AUDIT_SOURCES).optional(),
  sort: z.enum(['timestamp', '-timestamp', 'created_at', '-created_at']).default('-created_at'),
  ...pagination,
});
export type ListAuditLogsQuery = z.output<typeof listAuditLogsQuery>;

export const auditLogListResponse = pageEnvelope('logs', auditLogView);
