import { fleetChanges } from '#shared/domain/fleet.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsFleetChanges, async ({ query }, { db, config }) =>
  ok(await fleetChanges(db, config, query)),
);
