import { actorOf } from '#shared/domain/requests.ts';
import { ingestLogshipperRecords } from '#shared/domain/requests-audit-ingest.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { created } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.ingestAuditLogs, async ({ body }, { db, principal, sourceIp }) =>
  created(await ingestLogshipperRecords(db, body, actorOf(principal, sourceIp))),
);
