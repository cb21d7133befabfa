import { exportAuditChain } from '#shared/audit/audit.ts';
import { auditRoutes as routes } from '#shared/audit/routes.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { text } from '#shared/core/http/reply.ts';

export const handler = httpHandler(routes.exportAuditLogs, async ({ query }, { db }) => {
  const lines = await exportAuditChain(db, query.after_seq, query.limit);
  return text(
    lines.map((line) => `${JSON.stringify(line)}\n`).join(''),
    'application/x-ndjson; charset=utf-8',
    {
      'cache-control': 'no-store',
    },
  );
});
