import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsObservabilitySummary, async ({ query }, { db }) =>
  ok(await observabilitySummary(db, query)),
);
