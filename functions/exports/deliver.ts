// Scheduled (exports.interval; EventBridge in the stack, a timer locally): streams the stored events to every due
// export destination (shared/exports/delivery/deliver.ts), then logs each one's lag, which the stack's alarm watches:
// the worst of its streams, the tool calls and the class streams it takes.
import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { metricFields } from '#shared/core/metrics.ts';
import { getRuntime } from '#shared/core/runtime.ts';
import { deliverExports, EXPORT_LAG_METRIC, enabledDestinationLags } from '#shared/exports/streams.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const passes = await deliverExports(runtime.database.db, runtime.config);
  for (const pass of passes) {
    if (pass.error) log.warn('export delivery failed', { ...pass });
    else if (pass.delivered > 0) log.info('exports delivered', { ...pass });
  }
  const lags = await enabledDestinationLags(runtime.database.db);
  for (const lag of lags) {
    log.info('export lag', {
      ...lag,
      ...metricFields(
        { [EXPORT_LAG_METRIC]: { value: lag.lag_seconds, unit: 'Seconds' } },
        { Destination: lag.name },
      ),
    });
  }
  // One series without dimensions for the alarm: the worst destination's lag, over all its streams.
  if (lags.length > 0) {
    const worst = Math.max(...lags.map((l) => l.lag_seconds));
    log.info('export lag, worst destination', {
      ...metricFields({ [EXPORT_LAG_METRIC]: { value: worst, unit: 'Seconds' } }),
    });
  }
  return { destinations: passes, lags };
};
