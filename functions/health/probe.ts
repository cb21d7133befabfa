import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { runHealthProbe } from '#shared/health/health.ts';
import { environmentProbeChecks } from '#shared/requests/environments.ts';

/** Scheduled (EventBridge in AWS; a timer in the local server). Throws when unavailable so the target retries. */
export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { database, config } = await getRuntime();
  const result = await runHealthProbe(database, environmentProbeChecks(config));
  log.info('health probe', { status: result.status, durationMs: result.duration_ms });
  if (result.status === 'unavailable') throw new Error('health probe: database unavailable');
  return result;
};
