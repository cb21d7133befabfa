import { savePolicy } from '#shared/domain/policy.ts';
import { actorOf } from '#shared/domain/requests.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { ok } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(routes.putPolicy, async ({ body }, { db, principal, sourceIp }) =>
  ok(await savePolicy(db, body, actorOf(principal, sourceIp))),
);
