// Scheduled (every events.fold_interval: EventBridge in the stack, a timer in the local server): folds the events
// stored since the last fold into the rollups and series (shared/observability/rollups/rollups.ts), then the inventory
// reported since into the fleet counters (shared/observability/fleet/stats.ts), each in bounded calls, for up to
// FOLD_BUDGET_MS in all; a larger backlog is left to the next run, so no run nears the function's timeout. Reads never
// fold: each adds a bounded tail of what is not folded yet. Throws on a database error so that the target retries.

import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { foldFleetBacklog } from '#shared/observability/fleet/stats.ts';
import { FOLD_BUDGET_MS, foldBacklog } from '#shared/observability/rollups/rollups.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { database } = await getRuntime();
  const started = performance.now();
  const { folded, more, calls } = await foldBacklog(database.db, FOLD_BUDGET_MS);
  const eventsMs = performance.now() - started;
  if (folded > 0)
    log.info('rollups folded', {
      events: folded,
      calls,
      backlogLeft: more,
      durationMs: Math.round(eventsMs),
    });
  const fleet = await foldFleetBacklog(database.db, Math.max(0, FOLD_BUDGET_MS - eventsMs));
  const durationMs = Math.round(performance.now() - started);
  if (fleet.folded > 0) {
    log.info('fleet counters folded', {
      rows: fleet.folded,
      calls: fleet.calls,
      backlogLeft: fleet.more,
      durationMs,
    });
  }
  return { folded, more, inventory_rows: fleet.folded, inventory_more: fleet.more, duration_ms: durationMs };
};
