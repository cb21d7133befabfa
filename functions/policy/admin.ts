// The admin routes of the MCP policy (shared/policy/routes.ts), one function for all of them.

import { httpHandler } from '#shared/core/http/handler.ts';
import { ok } from '#shared/core/http/reply.ts';
import { routedHandler } from '#shared/core/http/routed.ts';
import {
  currentPolicy,
  diffPolicies,
  dryRunPolicy,
  getPolicyVersion,
  listPolicyDevices,
  listPolicyVersions,
  restorePolicy,
  savePolicy,
  validatePolicy,
} from '#shared/policy/policy.ts';
import { policyRoutes as routes } from '#shared/policy/routes.ts';
import { actorOf } from '#shared/requests/requests.ts';

export const handler = routedHandler([
  [routes.getPolicy, httpHandler(routes.getPolicy, async (_input, { db }) => ok(await currentPolicy(db)))],
  [
    routes.putPolicy,
    httpHandler(routes.putPolicy, async ({ body }, { db, principal, sourceIp }) =>
      ok(await savePolicy(db, body, actorOf(principal, sourceIp))),
    ),
  ],
  [
    routes.listPolicyVersions,
    httpHandler(routes.listPolicyVersions, async ({ query }, { db }) =>
      ok(await listPolicyVersions(db, query)),
    ),
  ],
  [
    routes.getPolicyVersion,
    httpHandler(routes.getPolicyVersion, async ({ params }, { db }) =>
      ok(await getPolicyVersion(db, params.version)),
    ),
  ],
  [
    routes.restorePolicy,
    httpHandler(routes.restorePolicy, async ({ params, body }, { db, principal, sourceIp }) =>
      ok(await restorePolicy(db, params.version, body.reason, actorOf(principal, sourceIp))),
    ),
  ],
  [
    routes.validatePolicy,
    httpHandler(routes.validatePolicy, async ({ body }) => ok(validatePolicy(body.policy))),
  ],
  [
    routes.diffPolicy,
    httpHandler(routes.diffPolicy, async ({ body }, { db }) => ok(await diffPolicies(db, body))),
  ],
  [
    routes.dryRunPolicy,
    httpHandler(routes.dryRunPolicy, async ({ body }, { db }) => ok(await dryRunPolicy(db, body))),
  ],
  [
    routes.listPolicyDevices,
    httpHandler(routes.listPolicyDevices, async ({ query }, { db }) =>
      ok(await listPolicyDevices(db, query)),
    ),
  ],
]);
