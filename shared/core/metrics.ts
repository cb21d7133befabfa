// CloudWatch metrics from log lines (the embedded metric format): fields that, added to a JSON log line, make
// CloudWatch Logs record the values as metrics, with no API call and no permission beyond writing logs.
export const METRIC_NAMESPACE = 'AgentControlPlane';

export type MetricUnit = 'Seconds' | 'Count';

/** The fields that turn one log line into data points of `metrics`, under `dimensions` (none: one series). */
export function metricFields(
  metrics: Record<string, { value: number; unit: MetricUnit }>,
  dimensions: Record<string, string> = {},
  now = Date.now(),
): Record<string, unknown> {
  return {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: METRIC_NAMESPACE,
          Dimensions: [Object.keys(dimensions)],
          Metrics: Object.entries(metrics).map(([Name, { unit }]) => ({ Name, Unit: unit })),
        },
      ],
    },
    ...dimensions,
    ...Object.fromEntries(Object.entries(metrics).map(([name, { value }]) => [name, value])),
  };
}
