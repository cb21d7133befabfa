import { verifyAuditChain } from '#shared/domain/audit.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.verifyAuditLogs, async ({ query }, { db }) =>
  ok(await verifyAuditChain(db, query.at_seq === undefined ? {} : { atSeq: query.at_seq })),
);
