// A stored tool call as OpenTelemetry, in the OTLP/JSON encoding an exporter sends: one CLIENT span per call (plus an
// `apply_guardrail` child when policy denied it) and one point of the `mcp.client.operation.duration` histogram.
// Follows the GenAI/MCP semantic conventions, status Development, pinned in OTEL_SEMCONV_VERSION (docs/exports.md).
import { hash } from 'node:crypto';
import { type ExportSource, errorTypeOf, type McpTransport, PRODUCT, timesOf } from './source.ts';

export const OTEL_SEMCONV_VERSION = '1.40.0';
export const OTEL_SCHEMA_URL = `https://opentelemetry.io/schemas/${OTEL_SEMCONV_VERSION}`;
/** The conventions have no attribute for the MCP server's name: ours, under our prefix. */
export const SERVER_NAME_ATTRIBUTE = 'acp.mcp.server.name';
/** The explicit bucket boundaries the conventions advise for the MCP duration histograms, in seconds. */
export const DURATION_BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] as const;

export type AnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean };
export interface KeyValue {
  key: string;
  value: AnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KeyValue[];
  status: { code: number; message?: string };
}
interface Scope {
  name: string;
  version: string;
}
export interface OtlpTraces {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: { scope: Scope; spans: OtlpSpan[]; schemaUrl: string }[];
    schemaUrl: string;
  }[];
}
export interface OtlpHistogramPoint {
  attributes: KeyValue[];
  startTimeUnixNano: string;
  timeUnixNano: string;
  count: string;
  sum: number;
  min: number;
  max: number;
  bucketCounts: string[];
  explicitBounds: number[];
}
export interface OtlpMetrics {
  resourceMetrics: {
    resource: { attributes: KeyValue[] };
    scopeMetrics: {
      scope: Scope;
      metrics: {
        name: string;
        unit: string;
        description: string;
        histogram: { aggregationTemporality: number; dataPoints: OtlpHistogramPoint[] };
      }[];
      schemaUrl: string;
    }[];
    schemaUrl: string;
  }[];
}

/** OTLP enum values (opentelemetry-proto trace.proto / metrics.proto). */
const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
const AGGREGATION_TEMPORALITY_DELTA = 1;

const SCOPE: Scope = { name: PRODUCT.vendor_name, version: OTEL_SEMCONV_VERSION };
const NETWORK_TRANSPORT: Record<McpTransport, string> = { stdio: 'pipe', http: 'tcp', sse: 'tcp' };

const str = (key: string, value: string): KeyValue => ({ key, value: { stringValue: value } });
const nanos = (ms: number): string => (ms === 0 ? '0' : `${ms}000000`);

let lastTrace = { key: '', id: '' };

/**
 * Trace and span ids derived from the event, so that a replayed export yields the same ids and a receiver can drop
 * the duplicate; the calls of one session share a trace.
 */
function idsOf(source: ExportSource): { traceId: string; spanId: string; guardrailSpanId: string } {
  const { event } = source;
  const trace =
    event.session_id === null ? `event:${event.id}` : `session:${event.device_id}:${event.session_id}`;
  // A session's calls come one after another in a batch: its trace id is hashed once for the run of them.
  if (trace !== lastTrace.key) lastTrace = { key: trace, id: hash('sha256', trace).slice(0, 32) };
  const traceId = lastTrace.id;
  const spans = hash('sha256', `span:${event.id}`);
  return { traceId, spanId: spans.slice(0, 16), guardrailSpanId: spans.slice(16, 32) };
}

/** What tells two resources apart (resourceAttributes' inputs), cheaper to compare than the attributes. */
export function resourceKey(source: ExportSource): string {
  const { event, device } = source;
  return device
    ? `${event.agent_type}\n${event.device_id}\n${device.brand}\n${device.model}`
    : `${event.agent_type}\n${event.device_id}`;
}

/** The resource: which agent (service.name) on which device (host.id). */
export function resourceAttributes(source: ExportSource): KeyValue[] {
  const { event, device } = source;
  const out = [str('service.name', event.agent_type), str('host.id', event.device_id)];
  if (device) out.push(str('device.manufacturer', device.brand), str('device.model.name', device.model));
  return out;
}

/** Attributes the span and the histogram point share (the conventions' metric attributes). */
function callAttributes(source: ExportSource, errorType: string | undefined): KeyValue[] {
  const { event } = source;
  const out = [
    str('mcp.method.name', 'tools/call'),
    str('gen_ai.operation.name', 'execute_tool'),
    str('gen_ai.tool.name', event.tool),
    str(SERVER_NAME_ATTRIBUTE, event.mcp_name),
  ];
  if (source.transport) out.push(str('network.transport', NETWORK_TRANSPORT[source.transport]));
  if (errorType !== undefined) out.push(str('error.type', errorType));
  return out;
}

/** The call as OTLP/JSON spans: the CLIENT span, and the guardrail's decision under it when policy denied it. */
export function toOtelSpans(source: ExportSource): OtlpSpan[] {
  const { event } = source;
  const errorType = errorTypeOf(source);
  const { traceId, spanId, guardrailSpanId } = idsOf(source);
  const { startMs, endMs } = timesOf(source);
  const attributes = callAttributes(source, errorType);
  if (source.tool_call_id !== undefined) attributes.push(str('gen_ai.tool.call.id', source.tool_call_id));
  if (event.session_id !== null) attributes.push(str('mcp.session.id', event.session_id));
  if (event.model !== null) attributes.push(str('gen_ai.request.model', event.model));
  if (event.actor_email !== null) attributes.push(str('user.email', event.actor_email));
  const start = nanos(startMs);
  const call: OtlpSpan = {
    traceId,
    spanId,
    name: `tools/call ${event.tool}`,
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: start,
    endTimeUnixNano: nanos(endMs),
    attributes,
    status: errorType === undefined ? { code: STATUS_UNSET } : { code: STATUS_ERROR, message: errorType },
  };
  if (event.result !== 'denied') return [call];
  const guardrail = [
    str('gen_ai.operation.name', 'apply_guardrail'),
    str('gen_ai.security.decision.type', 'deny'),
    str('gen_ai.security.target.type', 'tool_call'),
  ];
  if (event.rule_applied !== null) guardrail.push(str('gen_ai.security.policy.id', event.rule_applied));
  if (event.deny_reason !== null) guardrail.push(str('gen_ai.security.decision.reason', event.deny_reason));
  return [
    call,
    {
      traceId,
      spanId: guardrailSpanId,
      parentSpanId: spanId,
      name: 'apply_guardrail',
      kind: SPAN_KIND_INTERNAL,
      startTimeUnixNano: start,
      endTimeUnixNano: start,
      attributes: guardrail,
      status: { code: STATUS_UNSET },
    },
  ];
}

/** The call as an OTLP/JSON traces request (what POST /v1/traces takes). */
export function toOtelTraces(source: ExportSource): OtlpTraces {
  return {
    resourceSpans: [
      {
        resource: { attributes: resourceAttributes(source) },
        scopeSpans: [{ scope: SCOPE, spans: toOtelSpans(source), schemaUrl: OTEL_SCHEMA_URL }],
        schemaUrl: OTEL_SCHEMA_URL,
      },
    ],
  };
}

/** A call's duration as `mcp.client.operation.duration` measures it: seconds, the bucket over the bounds advised. */
export interface CallDuration {
  /** Tells the series apart: equal for two calls exactly when their attributes are (cheaper than comparing them). */
  series: string;
  /** The point's attributes (built on demand: a batch's calls fall into a few series). */
  attributes: () => KeyValue[];
  startMs: number;
  endMs: number;
  seconds: number;
  /** Index into the bucket counts: the first bound the duration is within, or the overflow bucket. */
  bucket: number;
}

export function callDuration(source: ExportSource): CallDuration {
  const { event } = source;
  const { startMs, endMs } = timesOf(source);
  const seconds = event.duration_ms / 1000;
  let bucket = DURATION_BOUNDS.findIndex((bound) => seconds <= bound);
  if (bucket === -1) bucket = DURATION_BOUNDS.length;
  const errorType = errorTypeOf(source);
  // callAttributes' inputs, each once, apart by NUL (which no text PostgreSQL stores holds).
  const series = `${event.tool}\u0000${event.mcp_name}\u0000${source.transport ?? ''}\u0000${errorType === undefined ? '-' : `+${errorType}`}`;
  return { series, attributes: () => callAttributes(source, errorType), startMs, endMs, seconds, bucket };
}

/** The call's duration as one point of `mcp.client.operation.duration`, in seconds, over the bounds advised. */
export function toOtelDurationPoint(source: ExportSource): OtlpHistogramPoint {
  const { attributes, startMs, endMs, seconds, bucket } = callDuration(source);
  const bucketCounts = new Array<string>(DURATION_BOUNDS.length + 1).fill('0');
  bucketCounts[bucket] = '1';
  return {
    attributes: attributes(),
    startTimeUnixNano: nanos(startMs),
    timeUnixNano: nanos(endMs),
    count: '1',
    sum: seconds,
    min: seconds,
    max: seconds,
    bucketCounts,
    explicitBounds: [...DURATION_BOUNDS],
  };
}

/** The histogram point as an OTLP/JSON metrics request (what POST /v1/metrics takes). */
export function toOtelMetrics(source: ExportSource): OtlpMetrics {
  return {
    resourceMetrics: [
      {
        resource: { attributes: resourceAttributes(source) },
        scopeMetrics: [
          {
            scope: SCOPE,
            metrics: [
              {
                name: 'mcp.client.operation.duration',
                unit: 's',
                description: 'The duration of the MCP request as observed on the sender',
                histogram: {
                  aggregationTemporality: AGGREGATION_TEMPORALITY_DELTA,
                  dataPoints: [toOtelDurationPoint(source)],
                },
              },
            ],
            schemaUrl: OTEL_SCHEMA_URL,
          },
        ],
        schemaUrl: OTEL_SCHEMA_URL,
      },
    ],
  };
}
