// Scheduled (every events.fold_interval: EventBridge in the stack, a timer in the local server): folds the events
// stored since the last fold into the rollups and series (shared/domain/observability-rollups.ts), so that the fold
// every admin read starts with stays small. Throws on a database error so that the target retries.
import { foldRollups } from '#shared/domain/observability-rollups.ts';
import { type InvocationFacts, invocationLogger } from '#shared/logger.ts';
import { getRuntime } from '#shared/runtime.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { database } = await getRuntime();
  const started = performance.now();
  const folded = await foldRollups(database.db);
  const durationMs = Math.round(performance.now() - started);
  if (folded > 0) log.info('rollups folded', { events: folded, durationMs });
  return { folded, duration_ms: durationMs };
};
