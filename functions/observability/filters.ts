import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { observabilityRoutes as routes } from '#shared/observability/routes.ts';
import { observabilityFilters } from '#shared/observability/summary/filter-values.ts';

export const handler = httpHandler(routes.obsObservabilityFilters, async ({ query }, { db, config }) =>
  ok(await observabilityFilters(db, config, query)),
);
