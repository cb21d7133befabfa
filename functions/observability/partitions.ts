// Scheduled (every events.maintenance_interval: EventBridge in the stack, a timer in the local server): creates the
// daily partitions of the events ahead and gives stray days of the default partition their own
// (shared/domain/observability-partitions.ts). Throws on a database error so that the target retries.
import { maintainEventPartitions } from '#shared/domain/observability-partitions.ts';
import { rootLogger } from '#shared/http/logger.ts';
import { getRuntime } from '#shared/runtime.ts';

export const handler = async () => {
  const { config, database } = await getRuntime();
  const started = performance.now();
  const result = await maintainEventPartitions(database.db, config);
  const durationMs = Math.round(performance.now() - started);
  if (result.created > 0 || result.stray > 0) {
    rootLogger.info('event partitions maintained', { ...result, durationMs });
  }
  return { ...result, duration_ms: durationMs };
};
