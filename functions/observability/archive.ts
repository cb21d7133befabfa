// Scheduled (every events.archive.interval: EventBridge in the stack, a timer in the local server; only when
// events.archive.target is not "none"): archives closed hours of events as Parquet (shared/observability/archive/archive.ts)
// to the configured store. It folds first, so hours that got late events are found. Throws on a database or store
// error so that the target retries; the hour being written is then written whole by the next run.

import type { Config } from '#shared/core/config/schema.ts';
import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { openObjectStore } from '#shared/core/object-store/open-store.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { archiveClosedHours } from '#shared/observability/archive/archive.ts';
import { foldBacklog } from '#shared/observability/rollups/rollups.ts';

/** How long a run folds before it exports: a few seconds at most, as the export's own hours need the rest of the run
 * (an hour folded later is only rewritten by a later run). */
const FOLD_BEFORE_EXPORT_MS = 5_000;

// The store is kept between invocations (its S3 client holds connections), for the config it was opened with.
let opened: { for: Config['events']['archive']; store: ReturnType<typeof openObjectStore> } | undefined;

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { config, database } = await getRuntime();
  if (opened?.for !== config.events.archive)
    opened = { for: config.events.archive, store: openObjectStore(config.events.archive, 'events.archive') };
  const store = await opened.store;
  if (!store) return { target: 'none', hours: 0 };
  const started = performance.now();
  await foldBacklog(database.db, FOLD_BEFORE_EXPORT_MS);
  const run = await archiveClosedHours(database.db, store, config);
  const durationMs = Math.round(performance.now() - started);
  const rows = run.hours.reduce((n, h) => n + h.rows, 0);
  const late = run.hours.filter((h) => h.late).length;
  if (run.hours.length > 0 || run.busy) {
    log.info('events archived', {
      location: store.location,
      hours: run.hours.length,
      late,
      rows,
      busy: run.busy,
      watermark: run.watermark,
      durationMs,
    });
  }
  return {
    target: config.events.archive.target,
    hours: run.hours.length,
    late_hours: late,
    rows,
    busy: run.busy,
    watermark: run.watermark,
    duration_ms: durationMs,
  };
};
