// Rows of the route table for data-access requests (the requester's and the admins'); merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import {
  approveBody,
  createRequestBody,
  denyBody,
  listAdminRequestsQuery,
  listOwnRequestsQuery,
  listUsageEventsQuery,
  queryBody,
  queryResponse,
  requestIdParam,
  requestListResponse,
  requestResponse,
  revokeBody,
  usageEventListResponse,
} from './schemas.ts';

export const createRequest = defineRoute({
  method: 'POST',
  path: '/v1/requests',
  handler: 'requests/create',
  auth: 'user',
  kind: 'write',
  tags: ['requests'],
  summary:
    'Ask for access to datasets (status pending); Idempotency-Key makes a retry return the first result',
  description:
    'With an Idempotency-Key header (1..200 visible ASCII characters), a retry by the same caller with the same key and the same body returns the request the first call created (201, header idempotent-replayed: true) instead of creating a second one. The same key with a different body is 422 idempotency_key_reused and creates nothing (draft-ietf-httpapi-idempotency-key-header). Keys are per caller.',
  body: createRequestBody,
  response: requestResponse,
  successStatuses: [201],
  headers: [
    {
      name: 'Idempotency-Key',
      description:
        'Makes a retry with the same body return the first result; 1..200 visible ASCII characters, per caller',
      schema: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' },
    },
  ],
  errors: [422],
  maxBody: { bytes: 262_144 /* 256 KiB */, code: 'payload_too_large' },
});

export const listOwnRequests = defineRoute({
  method: 'GET',
  path: '/v1/requests',
  handler: 'requests/list',
  auth: 'user',
  tags: ['requests'],
  summary: "The caller's own requests, paginated (default 20, maximum 100), newest first",
  query: listOwnRequestsQuery,
  response: requestListResponse,
});

export const getRequest = defineRoute({
  method: 'GET',
  path: '/v1/requests/{id}',
  handler: 'requests/get',
  auth: 'user',
  tags: ['requests'],
  summary: 'One request: its requester or an admin; anyone else gets 404 (never 403, so ids do not leak)',
  params: requestIdParam,
  response: requestResponse,
  errors: [404],
});

export const listUsageEvents = defineRoute({
  method: 'GET',
  path: '/v1/requests/{id}/usage-events',
  handler: 'requests/usage-events',
  auth: 'user',
  tags: ['requests'],
  summary:
    "Every usage event of a request (who, when, IP, the SQL's hash, rows, duration), paginated: its requester or an admin; anyone else gets 404",
  description:
    'The request itself shows only the newest `requests.usage_events_in_view` events; this lists them all. `action_type` filters on query (executed), query_failed or query_refused; the default order is newest first.',
  params: requestIdParam,
  query: listUsageEventsQuery,
  response: usageEventListResponse,
  errors: [404],
});

export const revokeRequest = defineRoute({
  method: 'POST',
  path: '/v1/requests/{id}/revoke',
  handler: 'requests/revoke',
  auth: 'user',
  kind: 'write',
  tags: ['requests'],
  summary: 'Revoke an approved or active request (requester or admin); 400 in any other state',
  params: requestIdParam,
  body: revokeBody,
  response: requestResponse,
  specErrors: [400, 401, 404, 500],
  statusOf: { conflict: 400 },
});

export const queryRequest = defineRoute({
  method: 'POST',
  path: '/v1/requests/{id}/query',
  handler: 'requests/query',
  auth: 'user',
  kind: 'query',
  tags: ['requests'],
  summary: 'Run one read-only SELECT against the active request environment, as the request’s role',
  description:
    'Only the requester (anyone else: 404, an admin who is not the requester too, with a message that says so; admins read requests at GET /v1/admin/requests/{id}). 409 request_not_active unless the request is active (checked again inside the query’s own transaction). The statement is parsed with the PostgreSQL parser and refused (400 sql_refused) unless it is a single SELECT over the request’s views (and CTEs in scope) using allowlisted functions, the size-multiplying ones (lpad, rpad, replace, regexp_replace) only with small constant arguments; it then runs as the request’s role, search_path = its schema, in a read-only transaction with a statement timeout (400 query_timeout), capped in rows (query.max_rows) and bytes (query.max_bytes) while it is fetched (truncated: true); a single row larger than max_bytes is 400 result_row_too_large. On the embedded PGlite (no statement timeout) statements that combine relations are planned first and refused above a cost (400 query_too_expensive), and WITH RECURSIVE and regular expressions are refused. 502/503 when an external environment service fails or is unreachable.',
  params: requestIdParam,
  body: queryBody,
  response: queryResponse,
  specErrors: [400, 401, 404, 409, 500, 502, 503],
  statusOf: { too_large: 400 },
  maxBody: { bytes: 131_072 /* 128 KiB */, code: 'payload_too_large' },
});

export const listAdminRequests = defineRoute({
  method: 'GET',
  path: '/v1/admin/requests',
  handler: 'requests/admin-list',
  auth: 'admin',
  tags: ['requests', 'admin'],
  summary: 'Every request, filtered by status and risk_level, sorted by created_at, paginated',
  description:
    'No query value is refused (the spec lists no 400 for this route): limit is capped into 1..100 and offset into 0..1,000,000, a value that is not a number is the default (20, 0), an unknown status or risk_level matches nothing (an empty page, total 0), an unknown sort is -created_at, unknown parameters are ignored. The answer’s limit and offset are the values applied. What is no text at all is 400 validation_failed naming the parameter, as on every route: U+0000 (NUL), or an escape that is not percent-encoded UTF-8 (%FF).',
  query: listAdminRequestsQuery,
  response: requestListResponse,
  specErrors: [401, 403, 500],
  // A parameter that is no text (NUL, %FF): refused as on every route, never compared with U+FFFD in its place.
  errors: [400],
});

export const getAdminRequest = defineRoute({
  method: 'GET',
  path: '/v1/admin/requests/{id}',
  handler: 'requests/admin-get',
  auth: 'admin',
  tags: ['requests', 'admin'],
  summary: 'One request',
  params: requestIdParam,
  response: requestResponse,
  errors: [404],
});

export const approveRequest = defineRoute({
  method: 'POST',
  path: '/v1/admin/requests/{id}/approve',
  handler: 'requests/approve',
  auth: 'admin',
  kind: 'write',
  tags: ['requests', 'admin'],
  summary: 'Approve a pending request (optional notes); 403 for the requester themself, 404 when not pending',
  description:
    'The spec lists Unauthorized, Forbidden and Not Found for this route: a request that is not pending (already approved, denied, …) is 404 request_not_pending, with a message naming its status. A body that is not the documented shape is 400, the one status outside the list: no other refuses malformed input.',
  params: requestIdParam,
  body: approveBody,
  response: requestResponse,
  specErrors: [401, 403, 404, 500],
  errors: [400],
  statusOf: { conflict: 404 },
});

export const denyRequest = defineRoute({
  method: 'POST',
  path: '/v1/admin/requests/{id}/deny',
  handler: 'requests/deny',
  auth: 'admin',
  kind: 'write',
  tags: ['requests', 'admin'],
  summary: 'Deny a pending request; reason required; 409 when not pending',
  params: requestIdParam,
  body: denyBody,
  response: requestResponse,
  errors: [404, 409],
});

export const retryProvisioning = defineRoute({
  method: 'POST',
  path: '/v1/admin/requests/{id}/provision',
  handler: 'requests/provision',
  auth: 'admin',
  kind: 'write',
  tags: ['requests', 'admin'],
  summary: 'Retry a failed provisioning (approved request, environment_status failed); 409 otherwise',
  params: requestIdParam,
  response: requestResponse,
  errors: [404, 409, 502],
});

export const requestRoutes = {
  createRequest,
  listOwnRequests,
  getRequest,
  listUsageEvents,
  revokeRequest,
  queryRequest,
  listAdminRequests,
  getAdminRequest,
  approveRequest,
  denyRequest,
  retryProvisioning,
} satisfies Record<string, RouteSpec>;
