// Golden tests of the OpenTelemetry mapping: each expected request is written out by hand from the GenAI/MCP
// semantic conventions (docs/exports.md); trace and span ids are sha256 prefixes computed apart from the code.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toOtelMetrics, toOtelTraces } from '../../../shared/exports/otel.ts';
import {
  ADVISED_DURATION_BOUNDS,
  allowedEvent,
  bareEvent,
  DEVICE_ID,
  deniedEvent,
  errorEvent,
} from './fixtures.ts';

type Kv = { key: string; value: { stringValue: string } };
const s = (key: string, value: string): Kv => ({ key, value: { stringValue: value } });
const SCHEMA_URL = 'https://opentelemetry.io/schemas/1.40.0';
const SCOPE = { name: 'agent-control-plane', version: '1.40.0' };
const T0 = '1795168800000000000'; // 2026-11-20T10:00:00Z
/** The attributes every tools/call span and point opens with. */
const toolsCall = (tool: string, server: string): Kv[] => [
  s('mcp.method.name', 'tools/call'),
  s('gen_ai.operation.name', 'execute_tool'),
  s('gen_ai.tool.name', tool),
  s('acp.mcp.server.name', server),
];
const DEV = [s('gen_ai.request.model', 'claude-sonnet-4'), s('user.email', 'dev@example.com')];
/** A bucketCounts array of 15 with a 1 at `index`. */
const oneAt = (index: number) => Array.from({ length: 15 }, (_, i) => (i === index ? '1' : '0'));

describe('exports: OpenTelemetry spans', () => {
  test('an allowed call over stdio: one CLIENT span with the MCP attributes, the device as the resource', () => {
    const traces = toOtelTraces({
      event: allowedEvent,
      transport: 'stdio',
      tool_call_id: '17',
      device: { brand: 'Apple', model: 'MacBookPro18,3' },
    });
    assert.deepEqual(traces, {
      resourceSpans: [
        {
          resource: {
            attributes: [
              s('service.name', 'claude-code'),
              s('host.id', DEVICE_ID),
              s('device.manufacturer', 'Apple'),
              s('device.model.name', 'MacBookPro18,3'),
            ],
          },
          scopeSpans: [
            {
              scope: SCOPE,
              schemaUrl: SCHEMA_URL,
              spans: [
                {
                  traceId: 'c7bd98e76804170c1da2d87c36307f18',
                  spanId: '212fb7cfdcbdddd4',
                  name: 'tools/call create_issue',
                  kind: 3,
                  startTimeUnixNano: T0,
                  endTimeUnixNano: '1795168800250000000',
                  attributes: [
                    ...toolsCall('create_issue', 'github'),
                    s('network.transport', 'pipe'),
                    s('gen_ai.tool.call.id', '17'),
                    s('mcp.session.id', 'sess-42'),
                    ...DEV,
                  ],
                  status: { code: 0 },
                },
              ],
            },
          ],
          schemaUrl: SCHEMA_URL,
        },
      ],
    });
  });

  test('a call an enforce rule denied over HTTP: ERROR with the deny code, and an apply_guardrail child', () => {
    const traces = toOtelTraces({ event: deniedEvent, transport: 'http' });
    assert.deepEqual(traces.resourceSpans[0]?.scopeSpans[0]?.spans, [
      {
        traceId: '056bcf25734d66f13f695da45fd59016',
        spanId: '204a3cd9787d49e2',
        name: 'tools/call query',
        kind: 3,
        startTimeUnixNano: T0,
        endTimeUnixNano: T0,
        attributes: [
          ...toolsCall('query', 'postgres-prod'),
          s('network.transport', 'tcp'),
          s('error.type', 'policy_denied'),
          s('mcp.session.id', 'sess-43'),
          ...DEV,
        ],
        status: { code: 2, message: 'policy_denied' },
      },
      {
        traceId: '056bcf25734d66f13f695da45fd59016',
        spanId: '25f08ee833853d42',
        parentSpanId: '204a3cd9787d49e2',
        name: 'apply_guardrail',
        kind: 1,
        startTimeUnixNano: T0,
        endTimeUnixNano: T0,
        attributes: [
          s('gen_ai.operation.name', 'apply_guardrail'),
          s('gen_ai.security.decision.type', 'deny'),
          s('gen_ai.security.target.type', 'tool_call'),
          s('gen_ai.security.policy.id', 'no-prod-writes@7'),
          s('gen_ai.security.decision.reason', 'Writes to production need an approved request'),
        ],
        status: { code: 0 },
      },
    ]);
  });

  test('a failed call: error.type is the code when known, else tool_error, and the status is ERROR', () => {
    const withCode = toOtelTraces({ event: errorEvent, transport: 'stdio', error_code: '-32603' });
    assert.deepEqual(withCode.resourceSpans[0]?.scopeSpans[0]?.spans, [
      {
        traceId: 'c7bd98e76804170c1da2d87c36307f18',
        spanId: 'ee52691d98b3099e',
        name: 'tools/call read_file',
        kind: 3,
        startTimeUnixNano: T0,
        endTimeUnixNano: '1795168801500000000',
        attributes: [
          ...toolsCall('read_file', 'filesystem'),
          s('network.transport', 'pipe'),
          s('error.type', '-32603'),
          s('mcp.session.id', 'sess-42'),
          ...DEV,
        ],
        status: { code: 2, message: '-32603' },
      },
    ]);
    const withoutCode = toOtelTraces({ event: errorEvent }).resourceSpans[0]?.scopeSpans[0]?.spans[0];
    assert.deepEqual(withoutCode?.attributes[4], s('error.type', 'tool_error'));
    assert.deepEqual(withoutCode?.status, { code: 2, message: 'tool_error' });
  });

  test('missing optional fields: no session, model, actor, transport or call id attributes; a trace of its own', () => {
    const traces = toOtelTraces({ event: bareEvent });
    assert.deepEqual(traces.resourceSpans[0]?.resource.attributes, [
      s('service.name', 'cursor'),
      s('host.id', DEVICE_ID),
    ]);
    assert.deepEqual(traces.resourceSpans[0]?.scopeSpans[0]?.spans, [
      {
        traceId: '37e2eff30a14514efc9abaf1ec9cbb44',
        spanId: '625ae7b51360d083',
        name: 'tools/call list_issues',
        kind: 3,
        startTimeUnixNano: T0,
        endTimeUnixNano: '1795168800040000000',
        attributes: toolsCall('list_issues', 'linear'),
        status: { code: 0 },
      },
    ]);
  });

  test('SSE is over HTTP, so over TCP', () => {
    const span = toOtelTraces({ event: bareEvent, transport: 'sse' }).resourceSpans[0]?.scopeSpans[0]
      ?.spans[0];
    assert.deepEqual(span?.attributes[4], s('network.transport', 'tcp'));
  });
});

describe('exports: the mcp.client.operation.duration histogram', () => {
  test('an allowed call of 250 ms: one point of 0.25 s in the (0.2, 0.5] bucket', () => {
    assert.deepEqual(toOtelMetrics({ event: allowedEvent, transport: 'stdio', tool_call_id: '17' }), {
      resourceMetrics: [
        {
          resource: { attributes: [s('service.name', 'claude-code'), s('host.id', DEVICE_ID)] },
          scopeMetrics: [
            {
              scope: SCOPE,
              schemaUrl: SCHEMA_URL,
              metrics: [
                {
                  name: 'mcp.client.operation.duration',
                  unit: 's',
                  description: 'The duration of the MCP request as observed on the sender',
                  histogram: {
                    aggregationTemporality: 1,
                    dataPoints: [
                      {
                        attributes: [...toolsCall('create_issue', 'github'), s('network.transport', 'pipe')],
                        startTimeUnixNano: T0,
                        timeUnixNano: '1795168800250000000',
                        count: '1',
                        sum: 0.25,
                        min: 0.25,
                        max: 0.25,
                        bucketCounts: [
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                          '1',
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                          '0',
                        ],
                        explicitBounds: ADVISED_DURATION_BOUNDS,
                      },
                    ],
                  },
                },
              ],
            },
          ],
          schemaUrl: SCHEMA_URL,
        },
      ],
    });
  });

  test('the point carries error.type, and a duration lands in its bucket (upper bound inclusive, overflow last)', () => {
    const point = (event: typeof errorEvent, error_code?: string) =>
      toOtelMetrics({ event, error_code }).resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.histogram
        .dataPoints[0];
    const failed = point(errorEvent, '-32603');
    assert.deepEqual(failed?.attributes.at(-1), s('error.type', '-32603'));
    assert.equal(failed?.sum, 1.5);
    assert.deepEqual(failed?.bucketCounts, oneAt(7));
    assert.deepEqual(point(deniedEvent)?.bucketCounts, oneAt(0));
    assert.deepEqual(point({ ...bareEvent, duration_ms: 10 })?.bucketCounts, oneAt(0));
    assert.deepEqual(point({ ...bareEvent, duration_ms: 11 })?.bucketCounts, oneAt(1));
    assert.deepEqual(point({ ...bareEvent, duration_ms: 500 })?.bucketCounts, oneAt(5));
    assert.deepEqual(point({ ...bareEvent, duration_ms: 300_000 })?.bucketCounts, oneAt(13));
    assert.deepEqual(point({ ...bareEvent, duration_ms: 300_001 })?.bucketCounts, oneAt(14));
  });
});
