// Scheduled (every minute locally; EventBridge in the stack): approved/active requests past valid_until become
// expired and their environments are torn down; failed teardowns are retried, and environments whose request is gone
// (a teardown lost to a crash) are swept.
import { providerFor } from '#shared/domain/environments/index.ts';
import { expireDueRequests } from '#shared/domain/requests-lifecycle.ts';
import { type InvocationFacts, invocationLogger } from '#shared/logger.ts';
import { getRuntime } from '#shared/runtime.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const result = await expireDueRequests(runtime.database.db, providerFor(runtime.database, runtime.config));
  if (result.expired.length || result.torn_down.length || result.swept.length)
    log.info('requests expired', result);
  return result;
};
