// Scheduled (exports.interval; EventBridge in the stack, a timer locally): streams the stored events to every due
// export destination (shared/exports/delivery/deliver.ts), then logs each one's lag, which the stack's alarm watches.
import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { deliverExports } from '#shared/exports/streams.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const passes = await deliverExports(runtime.database.db, runtime.config);
  for (const pass of passes) {
    if (pass.error) log.warn('export delivery failed', { ...pass });
    else if (pass.delivered > 0) log.info('exports delivered', { ...pass });
  }
  return { destinations: passes };
};
