import { healthReport } from '#shared/domain/health.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.healthcheck, async (_input, { config, runtime }) => {
  const report = await healthReport(config, runtime.database, runtime.startedAt, runtime.lambda);
  return flat(report, report.status === 'unavailable' ? 503 : 200, { 'cache-control': 'no-store' });
});
