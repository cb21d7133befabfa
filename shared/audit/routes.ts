// Rows of the route table for the audit log: the admins' listing and chain check, the log shipper's ingest;
// merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import {
  auditVerifyQuery,
  auditVerifyResponse,
  ingestAuditBody,
  ingestAuditResponse,
} from '../requests/schemas.ts';
import {
  auditActionsResponse,
  auditLogListResponse,
  exportAuditLogsQuery,
  listAuditLogsQuery,
} from './schemas.ts';

export const listAuditLogs = defineRoute({
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
});

export const verifyAuditLogs = defineRoute({
  method: 'GET',
  path: '/v1/admin/audit-logs/verify',
  handler: 'audit/verify',
  auth: 'admin',
  tags: ['audit'],
  summary:
    'Walk the audit hash chain; reports whether it is intact, the first broken record, and the head to anchor externally',
  description:
    "Recomputes every record's hash from the first one. `head` is the last record of the intact chain (its seq and hash): keep it somewhere the service cannot write (a ticket, a signed note, another account's bucket). Later, `?at_seq=<seq>` reports the hash the chain has at that record now; if it differs from the anchored one, history before it was rewritten, even if the chain is consistent again. `?since=verified` walks on from the last verified point instead (the head of the last intact walk, stored by this route and the anchor schedule), for a view that shows the chain's state on every load; `verified_from` says where it started.",
  query: auditVerifyQuery,
  response: auditVerifyResponse,
});

export const exportAuditLogs = defineRoute({
  method: 'GET',
  path: '/v1/admin/audit-logs/export',
  handler: 'audit/export',
  auth: 'admin',
  tags: ['audit'],
  summary:
    'The audit chain as JSON lines, a page at a time: each record with its seq, links and hashed fields',
  description:
    'One JSON object per line, in seq order: `{"seq", "prev_hash", "hash", "record"}`, where `record` holds exactly the fields the hash covers, as hashed. hash = SHA-256 hex of prev_hash + ":" + SHA-256 hex of the RFC 8785 canonical JSON of record ("" is the first prev_hash). Pages follow on from `after_seq` = the last line\'s seq until a page has fewer than `limit` lines. With the anchors (audit.anchors), `npm run audit:verify -- <file>` checks an export without the service (docs/exports.md).',
  query: exportAuditLogsQuery,
  responseType: 'application/x-ndjson',
});

export const ingestAuditLogs = defineRoute({
  method: 'POST',
  path: '/v1/admin/audit-logs',
  handler: 'audit/ingest',
  auth: 'admin',
  serviceToken: 'audit.ingest_token',
  kind: 'ingest',
  tags: ['audit'],
  summary:
    'Ingest a batch (1..1000) of log-shipper audit records (source logshipper), chained in batch order',
  description:
    "The bearer token is an admin's, or the log shipper's own service token (`audit.ingest_token`; in AWS the stack generates it in Secrets Manager, output AuditIngestTokenSecretArn). That token is accepted by this route only, so the shipper needs no admin account. Every record keeps who sent it in `metadata.ingested_by` (an admin's email, or `service-token:audit.ingest_token`), inside its hash.",
  body: ingestAuditBody,
  response: ingestAuditResponse,
  successStatuses: [201],
  errors: [413],
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'batch_too_large' },
});

export const listAuditActions = defineRoute({
  method: 'GET',
  path: '/v1/admin/audit-logs/actions',
  handler: 'audit/actions',
  auth: 'admin',
  tags: ['audit'],
  summary: 'The action types in the audit log, each with its number of records',
  response: auditActionsResponse,
});

export const auditRoutes = {
  listAuditLogs,
  listAuditActions,
  verifyAuditLogs,
  exportAuditLogs,
  ingestAuditLogs,
} satisfies Record<string, RouteSpec>;
