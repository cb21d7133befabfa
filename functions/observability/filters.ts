import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { observabilityFilters } from '#shared/observability/summary/filter-values.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsObservabilityFilters, async ({ query }, { db, config }) =>
  ok(await observabilityFilters(db, config, query)),
);
