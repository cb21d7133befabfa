// npm run bench:exports — the export mappings (shared/exports/) on one core: BENCH_EVENTS stored events (default
// 200,000; a mix of allowed, denied and failed calls) mapped to each shape, with events/s per shape (goal: 50,000).
// Each shape is also serialized (JSON.stringify), as an exporter sends it.
import { toOcsfApiActivity } from '#shared/exports/ocsf.ts';
import { toOtelMetrics, toOtelTraces } from '#shared/exports/otel.ts';
import type { ExportSource, StoredEvent } from '#shared/exports/source.ts';

const N = Number(process.env.BENCH_EVENTS ?? 200_000);
const GOAL = 50_000;
const T0 = Date.parse('2026-11-20T10:00:00Z');
const RESULTS = [
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'allowed',
  'denied',
  'error',
] as const;

function sourceAt(i: number): ExportSource {
  const result = RESULTS[i % RESULTS.length] ?? 'allowed';
  const event: StoredEvent = {
    id: String(i + 1),
    event_id: null,
    device_id: '6f1c2d3e-4b5a-4c6d-8e7f-901234567890',
    serial_number: `SN${i % 10_000}`,
    source_ip: '203.0.113.7',
    received_at: new Date(T0 + i * 10 + 500).toISOString(),
    event_time: new Date(T0 + i * 10).toISOString(),
    agent_type: i % 2 ? 'claude-code' : 'cursor',
    mcp_name: `server-${i % 50}`,
    tool: `tool_${i % 200}`,
    event_type: result === 'error' ? 'error' : 'result',
    result,
    deny_code: result === 'denied' ? 'policy_denied' : null,
    rule_applied: result === 'denied' ? 'no-prod-writes@7' : null,
    model: 'claude-sonnet-4',
    session_id: `sess-${i % 1000}`,
    group: 'platform',
    actor_email: `dev${i % 500}@example.com`,
    tokens_in: i % 4000,
    tokens_out: i % 300,
    duration_ms: i % 5000,
    prompt_truncated: false,
    deny_reason: result === 'denied' ? 'Writes to production need an approved request' : null,
    error_message: result === 'error' ? 'ENOENT' : null,
    skills: [],
    prompt: 'a prompt that is never exported',
    metadata: { arguments: { path: '/tmp/x' } },
    metadata_omitted: false,
  };
  return { event, transport: i % 3 ? 'stdio' : 'http' };
}

const sources = Array.from({ length: N }, (_, i) => sourceAt(i));
const shapes: [string, (s: ExportSource) => unknown][] = [
  ['OpenTelemetry traces (OTLP/JSON)', toOtelTraces],
  ['OpenTelemetry duration metric (OTLP/JSON)', toOtelMetrics],
  ['OCSF API Activity', toOcsfApiActivity],
];

console.log(`exports: ${N.toLocaleString('en')} events, node ${process.version}`);
let below = 0;
for (const [name, map] of shapes) {
  for (let i = 0; i < 20_000; i++) map(sources[i % N] as ExportSource); // warm-up
  for (const serialize of [false, true]) {
    const start = process.hrtime.bigint();
    let bytes = 0;
    for (const source of sources) {
      const out = map(source);
      if (serialize) bytes += JSON.stringify(out).length;
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const rate = Math.round(N / seconds);
    if (rate < GOAL) below++;
    const what = serialize ? `mapped + JSON (${Math.round(bytes / N)} B/event)` : 'mapped';
    console.log(`  ${name}, ${what}: ${rate.toLocaleString('en')} events/s (${seconds.toFixed(2)} s)`);
  }
}
console.log(below === 0 ? `every shape ≥ ${GOAL.toLocaleString('en')} events/s` : `${below} below the goal`);
