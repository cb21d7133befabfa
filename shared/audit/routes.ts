// The audit-log listing row of the route table; merged into shared/routes.ts after the foundation rows. An area
// table of its own because its schemas reach the database schema (drizzle), which other foundation functions do
// not load (infra/route-tables.ts).
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { auditActionsResponse, auditLogListResponse, listAuditLogsQuery } from './schemas.ts';

export const auditRoutes = {
  listAuditLogs: defineRoute({
    method: 'GET',
    path: '/v1/admin/audit-logs',
    handler: 'audit/list',
    auth: 'admin',
    tags: ['audit'],
    summary: 'Audit records from every source (api, env-svc, logshipper), filtered and paginated',
    description:
      'No query value is refused (the spec lists no 400 for this route): limit is capped into 1..100 and offset into 0..1,000,000, a value that is not a number is the default (20, 0), an unknown source matches nothing (an empty page, total 0), an unknown sort is -created_at, an empty filter is no filter, unknown parameters are ignored. The answer’s limit and offset are the values applied. What is no text at all is 400 validation_failed naming the parameter, as on every route: U+0000 (NUL), or an escape that is not percent-encoded UTF-8 (%FF).',
    query: listAuditLogsQuery,
    response: auditLogListResponse,
    specErrors: [401, 403, 500],
    // A parameter that is no text (NUL, %FF): refused as on every route, never compared with U+FFFD in its place.
    errors: [400],
  }),
  listAuditActions: defineRoute({
    method: 'GET',
    path: '/v1/admin/audit-logs/actions',
    handler: 'audit/actions',
    auth: 'admin',
    tags: ['audit'],
    summary: 'The action types in the audit log, each with its number of records',
    response: auditActionsResponse,
  }),
} satisfies Record<string, RouteSpec>;
