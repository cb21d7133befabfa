import { listPolicyDevices } from '#shared/domain/policy.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.listPolicyDevices, async ({ query }, { db }) =>
  ok(await listPolicyDevices(db, query)),
);
