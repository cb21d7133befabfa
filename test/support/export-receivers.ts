// Local receivers for the export destinations, decoding what they get as the real ones do: OTLP protobuf with the
// opentelemetry-proto definitions as the OpenTelemetry JS packages compiled them (protobufjs), OTLP JSON, Splunk HEC's
// documented event JSON (objects one after another) and the webhook's JSON lines with its HMAC signature. A receiver
// can be stopped and started again on its port (an outage: connections refused), or told to answer the next
// requests with a status and headers (429 with Retry-After, a 500 after taking the batch).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import root from 'otlp-proto-definitions/build/src/generated/root.js';

type Json = Record<string, unknown>;
/** What the generated static code has for each message (its declaration types the module as a bare Root). */
interface Message {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: { longs?: unknown; bytes?: unknown; defaults?: boolean }): Json;
}
type Service = Record<string, Message>;
const proto = (
  root as unknown as {
    opentelemetry: { proto: { collector: { trace: { v1: Service }; metrics: { v1: Service } } } };
  }
).opentelemetry.proto;
const traceRequest = proto.collector.trace.v1.ExportTraceServiceRequest as Message;
const metricsRequest = proto.collector.metrics.v1.ExportMetricsServiceRequest as Message;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

const hexOf = (value: unknown): string =>
  typeof value === 'string' ? Buffer.from(value, 'base64').toString('hex') : '';

function attributeMap(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (list ?? []) as { key: string; value: Json }[]) {
    const v = kv.value ?? {};
    out[kv.key] = v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
  }
  return out;
}

/** The spans of a POST /v1/traces body. */
export function decodeOtlpTraces(body: Buffer, contentType: string): ReceivedSpan[] {
  let request: Json;
  let id: (v: unknown) => string;
  if (contentType.startsWith('application/x-protobuf')) {
    request = traceRequest.toObject(traceRequest.decode(body), {
      longs: String,
      bytes: String,
      defaults: false,
    });
    id = hexOf;
  } else {
    request = JSON.parse(body.toString('utf8')) as Json;
    id = (v) => (typeof v === 'string' ? v : '');
  }
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Json[]) {
    const resource = attributeMap((rs.resource as Json | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Json[]) {
      for (const span of (ss.spans ?? []) as Json[]) {
        out.push({
          traceId: id(span.traceId),
          spanId: id(span.spanId),
          parentSpanId: id(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind),
          attributes: attributeMap(span.attributes),
          resource,
        });
      }
    }
  }
  return out;
}

/** One point of `mcp.client.operation.duration` as a receiver decodes it (unix nanoseconds as text). */
export interface ReceivedDurationPoint {
  resource: Record<string, unknown>;
  attributes: Record<string, unknown>;
  startTimeUnixNano: string;
  timeUnixNano: string;
  count: number;
  sum: number;
  min: number;
  max: number;
  bucketCounts: number[];
  explicitBounds: number[];
}

/** The `mcp.client.operation.duration` points of a POST /v1/metrics body. */
export function decodeOtlpDurationPoints(body: Buffer, contentType: string): ReceivedDurationPoint[] {
  let request: Json;
  if (contentType.startsWith('application/x-protobuf')) {
    request = metricsRequest.toObject(metricsRequest.decode(body), { longs: String });
  } else request = JSON.parse(body.toString('utf8')) as Json;
  const out: ReceivedDurationPoint[] = [];
  for (const rm of (request.resourceMetrics ?? []) as Json[]) {
    const resource = attributeMap((rm.resource as Json | undefined)?.attributes);
    for (const sm of (rm.scopeMetrics ?? []) as Json[])
      for (const m of (sm.metrics ?? []) as Json[]) {
        if (m.name !== 'mcp.client.operation.duration') continue;
        for (const p of ((m.histogram as Json).dataPoints ?? []) as Json[])
          out.push({
            resource,
            attributes: attributeMap(p.attributes),
            startTimeUnixNano: String(p.startTimeUnixNano),
            timeUnixNano: String(p.timeUnixNano),
            count: Number(p.count),
            sum: Number(p.sum),
            min: Number(p.min),
            max: Number(p.max),
            bucketCounts: ((p.bucketCounts ?? []) as unknown[]).map(Number),
            explicitBounds: ((p.explicitBounds ?? []) as unknown[]).map(Number),
          });
      }
  }
  return out;
}

/** The number of calls the histogram points of a POST /v1/metrics body count. */
export const decodeOtlpMetricCount = (body: Buffer, contentType: string): number =>
  decodeOtlpDurationPoints(body, contentType).reduce((n, p) => n + p.count, 0);

/**
 * HEC's batch format: event objects one after another, optionally separated by whitespace (Splunk's "Format events
 * for HTTP Event Collector"). Split by walking the JSON text's nesting, strings included.
 */
export function parseHecBatch(text: string): Json[] {
  const out: Json[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)) as Json);
    else if (depth === 0 && !/\s/.test(c ?? '')) throw new Error(`not HEC JSON at ${i}`);
  }
  if (depth !== 0) throw new Error('HEC JSON cut short');
  return out;
}

/** The webhook signature check a receiver makes (docs/exports.md): HMAC-SHA256 of `<timestamp>.<body>`. */
export function webhookVerifies(secret: string, body: string, signature: string, timestamp: string): boolean {
  const expected = Buffer.from(
    `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A forced answer for the next request(s). */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Record the request as received anyway (the receiver took the batch, then failed). */
  keep?: boolean;
}

export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  readonly answers: Answer[] = [];
  private server: Server | undefined;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      const answer = this.answers.shift();
      if (!answer || answer.keep) this.requests.push(request);
      res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json', ...answer?.headers });
      res.end(answer ? '{}' : '{"text":"Success","code":0}');
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops listening: connections are refused until start(). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  at(prefix: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }
}
