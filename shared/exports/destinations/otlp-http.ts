// OTLP/HTTP to any OpenTelemetry collector: the batch's spans to /v1/traces, then its duration points to
// /v1/metrics, protobuf (application/x-protobuf) or JSON (application/json). Headers (an API key…) come from the
// destination's secret, a JSON object. The two requests go out together; a batch counts as delivered when both
// succeed, and a failure of either sends both again with the next try (at least once).
import type { Destination } from './destination.ts';
import { metricsBody, tracesBody } from './otlp-encoding.ts';
import { postBatch } from './post.ts';
import type { OtlpHttpSettings } from './settings.ts';

const CONTENT_TYPE = { protobuf: 'application/x-protobuf', json: 'application/json' } as const;

export function otlpHttpDestination(
  settings: OtlpHttpSettings,
  headers: Record<string, string>,
  timeoutMs: number,
): Destination {
  const base = settings.endpoint.replace(/\/+$/, '');
  const all = { ...headers, 'content-type': CONTENT_TYPE[settings.encoding] };
  return {
    kind: 'otlp_http',
    async send(batch, signal) {
      const post = (path: string, body: Uint8Array) =>
        postBatch({ url: `${base}${path}`, headers: all, body, timeoutMs, signal });
      const traces = post('/v1/traces', tracesBody(batch, settings.encoding));
      if (!settings.metrics) return traces;
      const metrics = post('/v1/metrics', metricsBody(batch, settings.encoding));
      const [tracesResult, metricsResult] = await Promise.all([traces, metrics]);
      return tracesResult.ok ? metricsResult : tracesResult;
    },
  };
}
