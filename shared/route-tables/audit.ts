// The audit-log listing row of the route table; merged into shared/routes.ts after the foundation rows. An area
// table of its own because its schemas reach the database schema (drizzle), which other foundation functions do
// not load (infra/route-tables.ts).
import type { RouteSpec } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { auditLogListResponse, listAuditLogsQuery } from '../schemas/audit.ts';

export const auditRoutes = {
  listAuditLogs: defineRoute({
    method: 'GET',
    path: '/v1/admin/audit-logs',
    handler: 'admin/audit-logs-list',
    auth: 'admin',
    tags: ['audit'],
    summary: 'Audit records from every source (api, env-svc, logshipper), filtered and paginated',
    query: listAuditLogsQuery,
    response: auditLogListResponse,
  }),
} satisfies Record<string, RouteSpec>;
