import { listAuditLogs } from '#shared/audit/audit.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listAuditLogs, async ({ query }, { db }) =>
  ok(await listAuditLogs(db, query)),
);
