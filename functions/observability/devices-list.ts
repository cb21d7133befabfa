import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { listDevices } from '#shared/observability/fleet/fleet.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.obsListDevices, async ({ query }, { db, config }) =>
  ok(await listDevices(db, config, query)),
);
