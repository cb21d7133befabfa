import { anchorsToCheck } from '#shared/audit/anchors.ts';
import { verifyAuditChain, verifyAuditChainSinceVerified } from '#shared/audit/audit.ts';
import { auditRoutes as routes } from '#shared/audit/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';

export const handler = httpHandler(routes.verifyAuditLogs, async ({ query }, { db, config }) => {
  const anchors = await anchorsToCheck(config.audit.anchors);
  if (query.since === 'verified')
    return ok(await verifyAuditChainSinceVerified(db, anchors ? { anchors } : {}));
  return ok(
    await verifyAuditChain(db, {
      ...(query.at_seq === undefined ? {} : { atSeq: query.at_seq }),
      ...(anchors ? { anchors } : {}),
    }),
  );
});
