import { ingestLogshipperRecords } from '#shared/audit/ingest.ts';
import { auditRoutes as routes } from '#shared/audit/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { created } from '#shared/core/http/reply.ts';
import { actorOf } from '#shared/requests/requests.ts';

export const handler = httpHandler(routes.ingestAuditLogs, async ({ body }, { db, principal, sourceIp }) =>
  created(await ingestLogshipperRecords(db, body, actorOf(principal, sourceIp))),
);
