// Scheduled (every minute locally; EventBridge in the stack): approved/active requests past valid_until become
// expired and their environments are torn down; failed teardowns are retried, and environments whose request is gone
// (a teardown lost to a crash) are swept.

import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { providerFor } from '#shared/requests/environments.ts';
import { expireDueRequests } from '#shared/requests/lifecycle.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const result = await expireDueRequests(runtime.database.db, providerFor(runtime.database, runtime.config));
  if (result.expired.length || result.torn_down.length || result.swept.length)
    log.info('requests expired', result);
  return result;
};
