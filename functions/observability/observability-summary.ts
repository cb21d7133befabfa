import { observabilitySummary } from '#shared/domain/observability-summary.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsObservabilitySummary, async ({ query }, { db }) =>
  ok(await observabilitySummary(db, query)),
);
