import { observabilityFilters } from '#shared/domain/observability-filter-values.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsObservabilityFilters, async ({ query }, { db, config }) =>
  ok(await observabilityFilters(db, config, query)),
);
