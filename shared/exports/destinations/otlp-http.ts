// OTLP/HTTP to any OpenTelemetry collector: the batch's spans to /v1/traces, then its duration points to
// /v1/metrics, protobuf (application/x-protobuf) or JSON (application/json). Headers (an API key…) come from the
// destination's secret, a JSON object. A batch counts as delivered when both requests succeed; a failure of the
// second sends the spans again with the next try (at least once).
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
      const traces = await postBatch({
        url: `${base}/v1/traces`,
        headers: all,
        body: tracesBody(batch, settings.encoding),
        timeoutMs,
        signal,
      });
      if (!traces.ok || !settings.metrics) return traces;
      return postBatch({
        url: `${base}/v1/metrics`,
        headers: all,
        body: metricsBody(batch, settings.encoding),
        timeoutMs,
        signal,
      });
    },
  };
}
