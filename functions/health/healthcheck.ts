import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '#shared/core/errors.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { healthReport } from '#shared/health/health.ts';
import { healthRoutes as routes } from '#shared/health/routes.ts';

export const handler = httpHandler(routes.healthcheck, async (_input, { config, runtime }) => {
  const report = await healthReport(config, runtime.database, runtime.startedAt, runtime.lambda);
  // A 503 says when to look again, as every 503 of the service does (docs/api.md, "When to retry").
  return report.status === 'unavailable'
    ? flat(report, 503, {
        'cache-control': 'no-store',
        'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
      })
    : flat(report, 200, { 'cache-control': 'no-store' });
});
