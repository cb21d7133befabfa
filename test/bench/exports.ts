// npm run bench:exports — the export mappings (shared/exports/) on one core: BENCH_EVENTS records of each kind
// (default 200,000; tool calls a mix of allowed, denied and failed calls) mapped to each shape, with events/s per shape
// (goal: 50,000) and its ratio to the baseline of the same run: the record serialized as read (JSON.stringify). Each
// shape is also serialized, as an exporter sends it, and the OCSF classes encoded as Security Lake's Parquet.
import * as ocsf from '#shared/exports/ocsf.ts';
import type { OcsfClassKey } from '#shared/exports/ocsf-objects.ts';
import { encodeOcsfParquet } from '#shared/exports/ocsf-parquet.ts';
import { toOtelMetrics, toOtelTraces } from '#shared/exports/otel.ts';
import type {
  AccessChangeSource,
  AlertSource,
  DatastoreQuerySource,
  DeviceInventorySource,
  ExportSource,
  StoredEvent,
} from '#shared/exports/source.ts';

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

const DEVICE = '6f1c2d3e-4b5a-4c6d-8e7f-901234567890';
const iso = (ms: number) => new Date(ms).toISOString();

function inventoryAt(i: number): DeviceInventorySource {
  const seen = iso(T0 + i * 1000);
  return {
    device: {
      id: DEVICE,
      serial_number: `SN${i % 10_000}`,
      brand: 'Apple',
      model: 'MacBookPro18,3',
      owner_subject: `user-${i % 500}`,
      owner_email: `dev${i % 500}@example.com`,
      status: 'online',
      last_seen_at: seen,
      last_inventory_at: seen,
      last_event_at: seen,
      created_at: iso(T0),
      updated_at: seen,
      agent_version: '0.9.1',
      agents: 1,
      mcps: 1,
    },
    agents: [],
    mcps: [
      {
        agent_type: 'claude-code',
        name: `server-${i % 50}`,
        enabled: true,
        transport: 'stdio',
        scope: 'user',
        source: { type: 'npm', name: `@acme/server-${i % 50}`, version: '1.2.3' },
        fingerprint: null,
        first_seen_at: iso(T0),
        last_seen_at: seen,
      },
    ],
    as_of: seen,
  };
}

const ACTIONS = ['request.approved', 'request.revoked', 'request.expired'] as const;
function accessAt(i: number): AccessChangeSource {
  const at = iso(T0 + i * 1000);
  return {
    audit: {
      id: String(i + 1),
      action_type: ACTIONS[i % 3] ?? 'request.approved',
      actor_email: i % 3 === 2 ? 'system' : 'admin@example.com',
      actor_id: i % 3 === 2 ? 'system' : 'admin',
      app_name: '',
      container_id: '',
      environment_id: '',
      environment_name: '',
      ip_address: '198.51.100.4',
      level: 'info',
      resource_id: `req-${i}`,
      resource_type: 'request',
      resource_name: null,
      stage: '',
      source: 'api',
      timestamp: at,
      created_at: at,
      metadata: {},
    },
    request: {
      id: `req-${i}`,
      requester: { id: `user-${i % 500}`, name: 'Dev', email: `dev${i % 500}@example.com` },
      scope: {
        datasources: [{ datasets: [{ namespace: 'orders' }, { namespace: 'customers' }] }],
      } as unknown as AccessChangeSource['request']['scope'],
      datasource_names: ['warehouse'],
      valid_until: iso(T0 + 86_400_000),
    },
  };
}

const USAGE = ['query', 'query', 'query', 'query_failed', 'query_refused'] as const;
function queryAt(i: number): DatastoreQuerySource {
  return {
    usage: {
      id: String(i + 1),
      action_type: USAGE[i % USAGE.length] ?? 'query',
      ip_address: '203.0.113.7',
      timestamp: iso(T0 + i * 10),
      metadata: {
        actor_id: `user-${i % 500}`,
        actor_email: `dev${i % 500}@example.com`,
        sql_sha256: 'a'.repeat(64),
        row_count: i % 1000,
        duration_ms: i % 300,
      },
    },
    request: { id: `req-${i % 100}`, environment_id: `env-${i % 100}`, datasource_names: ['warehouse'] },
  };
}

const KINDS = ['new_server', 'version_changed', 'source_changed', 'denied_server', 'denied_spike'] as const;
function alertAt(i: number): AlertSource {
  return {
    id: `5e6f7a8b-0000-4000-8000-${String(i).padStart(12, '0')}`,
    kind: KINDS[i % KINDS.length] ?? 'new_server',
    subject: `npm:@acme/server-${i % 50}`,
    status: i % 2 ? 'acknowledged' : 'open',
    details: { identity: `npm:@acme/server-${i % 50}`, name: `server-${i % 50}` },
    device_count: i % 40,
    first_seen_at: iso(T0 + i * 1000),
    last_seen_at: iso(T0 + i * 2000),
    acknowledged_at: i % 2 ? iso(T0 + i * 3000) : null,
    acknowledged_by: i % 2 ? 'admin@example.com' : null,
    acknowledge_note: null,
  };
}

type Mapping = [name: string, records: unknown[], map: (r: never) => unknown, ocsf?: OcsfClassKey];
/** A mapping over N records of one kind, made by `at`. */
const over = <R>(name: string, at: (i: number) => R, map: (r: R) => unknown, key?: OcsfClassKey): Mapping => [
  name,
  Array.from({ length: N }, (_, i) => at(i)),
  map,
  key,
];
const mappings: Mapping[] = [
  over('OpenTelemetry traces (OTLP/JSON)', sourceAt, toOtelTraces),
  over('OpenTelemetry duration metric (OTLP/JSON)', sourceAt, toOtelMetrics),
  over('OCSF API Activity (6003)', sourceAt, ocsf.toOcsfApiActivity, 'apiActivity'),
  over('OCSF Device Inventory Info (5001)', inventoryAt, ocsf.toOcsfDeviceInventory, 'deviceInventory'),
  over(
    'OCSF Software Inventory Info (5020, one MCP server each)',
    inventoryAt,
    (r) => ocsf.toOcsfSoftwareInventory(r)[0],
    'softwareInventory',
  ),
  over('OCSF User Access Management (3005)', accessAt, ocsf.toOcsfUserAccess, 'userAccess'),
  over('OCSF Datastore Activity (6005)', queryAt, ocsf.toOcsfDatastoreActivity, 'datastoreActivity'),
  over(
    'OCSF Detection Finding (2004)',
    alertAt,
    (r) => ocsf.toOcsfDetectionFinding(r, 0),
    'detectionFinding',
  ),
];

const rate = (seconds: number) => Math.round(N / seconds);
function timed(run: () => number): { seconds: number; bytes: number } {
  const start = process.hrtime.bigint();
  const bytes = run();
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, bytes };
}

console.log(`exports: ${N.toLocaleString('en')} records per kind, node ${process.version}`);
let below = 0;
for (const [name, records, map, ocsf] of mappings) {
  const mapOne = map as (r: unknown) => unknown;
  for (let i = 0; i < 20_000; i++) mapOne(records[i % N]); // warm-up
  // The baseline: the record as read, serialized as it is.
  const raw = timed(() => records.reduce((n: number, r) => n + JSON.stringify(r).length, 0));
  const mapped = timed(() => {
    for (const r of records) mapOne(r);
    return 0;
  });
  const json = timed(() => records.reduce((n: number, r) => n + JSON.stringify(mapOne(r)).length, 0));
  if (rate(mapped.seconds) < GOAL) below++;
  const ratio = (t: { seconds: number }) => (raw.seconds / t.seconds).toFixed(2);
  console.log(`  ${name}`);
  console.log(`    baseline, the record as JSON: ${rate(raw.seconds).toLocaleString('en')} records/s`);
  console.log(
    `    mapped: ${rate(mapped.seconds).toLocaleString('en')} events/s (${ratio(mapped)}× baseline)`,
  );
  console.log(
    `    mapped + JSON: ${rate(json.seconds).toLocaleString('en')} events/s (${ratio(json)}× baseline, ${Math.round(json.bytes / N)} B/event)`,
  );
  if (ocsf) {
    const events = records.slice(0, 50_000).map(mapOne) as object[];
    const parquet = timed(() => encodeOcsfParquet(ocsf, events).length);
    const perSecond = Math.round(events.length / parquet.seconds);
    console.log(
      `    Security Lake Parquet (${events.length.toLocaleString('en')} events a file): ${perSecond.toLocaleString('en')} events/s, ${(parquet.bytes / events.length).toFixed(1)} B/event`,
    );
  }
}
console.log(
  below === 0 ? `every mapping ≥ ${GOAL.toLocaleString('en')} events/s` : `${below} below the goal`,
);
