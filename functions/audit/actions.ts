import { auditActions } from '#shared/audit/audit.ts';
import { auditRoutes as routes } from '#shared/audit/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';

export const handler = httpHandler(routes.listAuditActions, async (_request, { db }) =>
  ok(await auditActions(db)),
);
