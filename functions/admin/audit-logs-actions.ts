import { auditActions } from '#shared/domain/audit.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listAuditActions, async (_request, { db }) =>
  ok(await auditActions(db)),
);
