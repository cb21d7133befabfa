// Scheduled (every events.maintenance_interval: EventBridge in the stack, a timer in the local server): the event
// partitions (shared/observability/partitions/maintenance.ts). It folds pending events into the rollups first, so the
// partitions that retention then drops are in them (a day the fold has not finished is kept for a later run);
// creates the daily partitions ahead and gives stray days of the default partition their own; drops the partitions
// past events.retention (an audit record each; a day whose partition stays locked, or that holds rows the archive
// lacks, is kept and logged) and the rollup rows past events.rollup_retention. Throws on a database error so that the
// target retries.

import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import {
  applyEventRetention,
  maintainEventPartitions,
} from '#shared/observability/partitions/maintenance.ts';
import { FOLD_BUDGET_MS, foldBacklog } from '#shared/observability/rollups/rollups.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { config, database } = await getRuntime();
  const started = performance.now();
  const backlog = await foldBacklog(database.db, FOLD_BUDGET_MS);
  if (backlog.more)
    log.warn('the rollup fold has a backlog: retention keeps the days not yet folded', {
      folded: backlog.folded,
      calls: backlog.calls,
    });
  const result = await maintainEventPartitions(database.db, config);
  const retention = await applyEventRetention(database.db, config);
  const durationMs = Math.round(performance.now() - started);
  const dropped = retention.dropped.map((d) => `${d.name} (${d.rows} events)`);
  // Found under the partition's lock: a write in progress, or rows the archive lacks. The next run tries again.
  for (const k of retention.kept.filter((k) => k.reason === 'locked' || k.hours))
    log.warn(
      k.reason === 'locked'
        ? 'retention kept a day: its partition stayed locked past the lock timeout'
        : 'retention kept a day: hours hold other than their archived count; the archive writes them again',
      { partition: k.name, hours: k.hours },
    );
  if (result.created > 0 || result.stray > 0 || dropped.length > 0 || retention.kept.length > 0) {
    log.info('event partitions maintained', {
      ...result,
      dropped,
      kept: retention.kept.map((k) => `${k.name} (${k.reason})`),
      rollupRowsDeleted: retention.rollupRowsDeleted,
      durationMs,
    });
  }
  return {
    ...result,
    dropped: retention.dropped.length,
    kept: retention.kept.length,
    rollup_rows_deleted: retention.rollupRowsDeleted,
    duration_ms: durationMs,
  };
};
