import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';

export const handler = httpHandler(routes.obsObservabilitySummary, async ({ query }, { db }) =>
  ok(await observabilitySummary(db, query)),
);
