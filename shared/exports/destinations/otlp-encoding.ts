// The OTLP request bodies of a batch, encoded by the OpenTelemetry JS serializers (@opentelemetry/otlp-transformer,
// protobuf or JSON), so that the wire format is theirs, not ours. The mapping (../otel.ts) decides what a call is;
// this hands its spans and points to the serializers as the SDK's own types.
import { type Attributes, SpanKind, type SpanStatusCode, TraceFlags, ValueType } from '@opentelemetry/api';
import {
  JsonMetricsSerializer,
  JsonTraceSerializer,
  ProtobufMetricsSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import {
  callDuration,
  DURATION_BOUNDS,
  type KeyValue,
  OTEL_SCHEMA_URL,
  OTEL_SEMCONV_VERSION,
  resourceAttributes,
  resourceKey,
  toOtelSpans,
} from '../otel.ts';
import { type ExportSource, PRODUCT } from '../source.ts';

export type OtlpEncoding = 'protobuf' | 'json';

const SCOPE = { name: PRODUCT.vendor_name, version: OTEL_SEMCONV_VERSION, schemaUrl: OTEL_SCHEMA_URL };
const SDK_KIND: Record<number, SpanKind> = { 1: SpanKind.INTERNAL, 2: SpanKind.SERVER, 3: SpanKind.CLIENT };

function attributesOf(list: readonly KeyValue[]): Attributes {
  const out: Attributes = {};
  for (const { key, value } of list) {
    if ('stringValue' in value) out[key] = value.stringValue;
    else if ('intValue' in value) out[key] = Number(value.intValue);
    else if ('doubleValue' in value) out[key] = value.doubleValue;
    else out[key] = value.boolValue;
  }
  return out;
}

/** Unix nanoseconds as text → [seconds, nanoseconds], by splitting the digits (no BigInt on the hot path). */
function hrTime(nanos: string): [number, number] {
  const cut = nanos.length - 9;
  return cut > 0 ? [Number(nanos.slice(0, cut)), Number(nanos.slice(cut))] : [0, Number(nanos)];
}

const NANOS_PER_SECOND = 1_000_000_000;

/** Epoch milliseconds as an hrTime. */
function msTime(ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1_000_000)];
}

/** `end - start` of two hrTimes, as an hrTime. */
function hrDuration(start: [number, number], end: [number, number]): [number, number] {
  const nanos = end[1] - start[1];
  return nanos < 0 ? [end[0] - start[0] - 1, nanos + NANOS_PER_SECOND] : [end[0] - start[0], nanos];
}

/** One Resource per distinct resource of the batch: the serializers group spans by the Resource object. */
function resources(): (source: ExportSource) => Resource {
  const seen = new Map<string, Resource>();
  return (source) => {
    const key = resourceKey(source);
    let resource = seen.get(key);
    if (!resource) {
      resource = resourceFromAttributes(attributesOf(resourceAttributes(source)), {
        schemaUrl: OTEL_SCHEMA_URL,
      });
      seen.set(key, resource);
    }
    return resource;
  };
}

/** The batch's spans as the SDK's finished spans. */
export function readableSpans(batch: readonly ExportSource[]): ReadableSpan[] {
  const resourceOf = resources();
  const out: ReadableSpan[] = [];
  for (const source of batch) {
    const resource = resourceOf(source);
    for (const span of toOtelSpans(source)) {
      const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
      const startTime = hrTime(span.startTimeUnixNano);
      const endTime = hrTime(span.endTimeUnixNano);
      const status: ReadableSpan['status'] = { code: span.status.code as SpanStatusCode };
      if (span.status.message !== undefined) status.message = span.status.message;
      out.push({
        name: span.name,
        kind: SDK_KIND[span.kind] ?? SpanKind.INTERNAL,
        spanContext: () => context,
        parentSpanContext:
          span.parentSpanId === undefined
            ? undefined
            : { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED },
        startTime,
        endTime,
        duration: hrDuration(startTime, endTime),
        status,
        attributes: attributesOf(span.attributes),
        links: [],
        events: [],
        ended: true,
        resource,
        instrumentationScope: SCOPE,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
      });
    }
  }
  return out;
}

/** A series' calls so far: the sums of their durations. */
interface Merged {
  startMs: number;
  endMs: number;
  attributes: Attributes;
  counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

/**
 * The batch's durations, one ResourceMetrics per resource (each one export request of the SDK), with one histogram
 * point per resource and attribute set: the calls of the batch merged, as an SDK's histogram aggregates its
 * measurements over an export interval (delta temporality, from the earliest call's start to the latest call's end).
 */
export function resourceMetrics(batch: readonly ExportSource[]): ResourceMetrics[] {
  const resourceOf = resources();
  const byResource = new Map<Resource, Map<string, Merged>>();
  for (const source of batch) {
    const resource = resourceOf(source);
    const call = callDuration(source);
    const series = byResource.get(resource) ?? new Map<string, Merged>();
    byResource.set(resource, series);
    let merged = series.get(call.series);
    if (!merged) {
      merged = {
        startMs: call.startMs,
        endMs: call.endMs,
        attributes: attributesOf(call.attributes()),
        counts: new Array<number>(DURATION_BOUNDS.length + 1).fill(0),
        count: 0,
        sum: 0,
        min: call.seconds,
        max: call.seconds,
      };
      series.set(call.series, merged);
    }
    merged.startMs = Math.min(merged.startMs, call.startMs);
    merged.endMs = Math.max(merged.endMs, call.endMs);
    merged.counts[call.bucket] = (merged.counts[call.bucket] ?? 0) + 1;
    merged.count++;
    merged.sum += call.seconds;
    merged.min = Math.min(merged.min, call.seconds);
    merged.max = Math.max(merged.max, call.seconds);
  }
  return [...byResource].map(([resource, series]) => ({
    resource,
    scopeMetrics: [
      {
        scope: SCOPE,
        metrics: [
          {
            descriptor: {
              name: 'mcp.client.operation.duration',
              description: 'The duration of the MCP request as observed on the sender',
              unit: 's',
              valueType: ValueType.DOUBLE,
            },
            aggregationTemporality: AggregationTemporality.DELTA,
            dataPointType: DataPointType.HISTOGRAM,
            dataPoints: [...series.values()].map((m) => ({
              startTime: msTime(m.startMs),
              endTime: msTime(m.endMs),
              attributes: m.attributes,
              value: {
                buckets: { boundaries: [...DURATION_BOUNDS], counts: m.counts },
                count: m.count,
                sum: m.sum,
                min: m.min,
                max: m.max,
              },
            })),
          },
        ],
      },
    ],
  }));
}

const utf8 = new TextDecoder();
const SERIALIZERS = {
  protobuf: { traces: ProtobufTraceSerializer, metrics: ProtobufMetricsSerializer },
  json: { traces: JsonTraceSerializer, metrics: JsonMetricsSerializer },
} as const;

const serialized = (body: Uint8Array | undefined): Uint8Array => {
  if (!body) throw new Error('the OTLP serializer returned nothing');
  return body;
};

/** POST /v1/traces's body. */
export const tracesBody = (batch: readonly ExportSource[], encoding: OtlpEncoding): Uint8Array =>
  serialized(SERIALIZERS[encoding].traces.serializeRequest(readableSpans(batch)));

/**
 * POST /v1/metrics's body: the serializer encodes one resource per request, so the requests are joined into one. In
 * protobuf, concatenated messages are one message whose repeated fields are appended; in JSON, the arrays are.
 */
export function metricsBody(batch: readonly ExportSource[], encoding: OtlpEncoding): Uint8Array {
  const parts = resourceMetrics(batch).map((rm) =>
    serialized(SERIALIZERS[encoding].metrics.serializeRequest(rm)),
  );
  if (encoding === 'protobuf') return Buffer.concat(parts);
  const joined = parts.flatMap(
    (part) => (JSON.parse(utf8.decode(part)) as { resourceMetrics: unknown[] }).resourceMetrics,
  );
  return Buffer.from(JSON.stringify({ resourceMetrics: joined }));
}
