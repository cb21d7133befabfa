// Stored events as GET …/observability/events/{id} returns them, and the other records the OCSF classes map (a
// device's inventory, a request's audit record, a usage event, an alert) as the API returns them, for the golden tests. Each carries
// a prompt, metadata with tool arguments and a result, and an error message echoing arguments: none may be exported.
import type {
  AccessChangeSource,
  AlertSource,
  DatastoreQuerySource,
  DeviceInventorySource,
  StoredEvent,
} from '../../../shared/exports/source.ts';

/** The bucket bounds, in seconds, the MCP semantic conventions advise for `mcp.client.operation.duration`. */
export const ADVISED_DURATION_BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

export const DEVICE_ID = '6f1c2d3e-4b5a-4c6d-8e7f-901234567890';

/** Allowed, with every optional field set. */
export const allowedEvent: StoredEvent = {
  id: '4711',
  event_id: 'b3a1c0de-0000-4000-8000-000000000001',
  device_id: DEVICE_ID,
  serial_number: 'C02XK0AAJGH5',
  source_ip: '203.0.113.7',
  received_at: '2026-11-20T10:00:05.000Z',
  event_time: '2026-11-20T10:00:00.000Z',
  agent_type: 'claude-code',
  mcp_name: 'github',
  tool: 'create_issue',
  event_type: 'result',
  result: 'allowed',
  deny_code: null,
  rule_applied: null,
  model: 'claude-sonnet-4',
  session_id: 'sess-42',
  group: 'platform',
  actor_email: 'dev@example.com',
  tokens_in: 1200,
  tokens_out: 80,
  duration_ms: 250,
  prompt_truncated: false,
  deny_reason: null,
  error_message: null,
  skills: ['triage'],
  prompt: 'PROMPT-SECRET open an issue about the outage',
  metadata: { arguments: { title: 'ARGS-SECRET' }, result: { content: 'RESULT-SECRET' } },
  metadata_omitted: false,
};

/** Denied by an enforce-mode rule of policy version 7. */
export const deniedEvent: StoredEvent = {
  ...allowedEvent,
  id: '4713',
  event_id: 'b3a1c0de-0000-4000-8000-000000000003',
  mcp_name: 'postgres-prod',
  tool: 'query',
  event_type: 'invocation',
  result: 'denied',
  deny_code: 'policy_denied',
  rule_applied: 'no-prod-writes@7',
  deny_reason: 'Writes to production need an approved request',
  session_id: 'sess-43',
  tokens_in: 0,
  tokens_out: 0,
  duration_ms: 0,
};

/** The tool failed with a JSON-RPC error; its message echoes the arguments. */
export const errorEvent: StoredEvent = {
  ...allowedEvent,
  id: '4714',
  event_id: 'b3a1c0de-0000-4000-8000-000000000004',
  mcp_name: 'filesystem',
  tool: 'read_file',
  event_type: 'error',
  result: 'error',
  error_message: 'ENOENT reading ARGS-SECRET /etc/shadow',
  duration_ms: 1500,
  tokens_in: 10,
  tokens_out: 0,
};

/** Allowed, with every optional field absent. */
export const bareEvent: StoredEvent = {
  id: '4712',
  event_id: null,
  device_id: DEVICE_ID,
  serial_number: 'C02XK0AAJGH5',
  source_ip: null,
  received_at: '2026-11-20T10:00:05.000Z',
  event_time: '2026-11-20T10:00:00.000Z',
  agent_type: 'cursor',
  mcp_name: 'linear',
  tool: 'list_issues',
  event_type: 'result',
  result: 'allowed',
  deny_code: null,
  rule_applied: null,
  model: null,
  session_id: null,
  group: null,
  actor_email: null,
  tokens_in: 0,
  tokens_out: 0,
  duration_ms: 40,
  prompt_truncated: false,
  deny_reason: null,
  error_message: null,
  skills: [],
  prompt: null,
  metadata: null,
  metadata_omitted: true,
};

export const inventory: DeviceInventorySource = {
  device: {
    id: DEVICE_ID,
    serial_number: 'C02XK0AAJGH5',
    brand: 'Apple',
    model: 'MacBookPro18,3',
    owner_subject: 'auth0|dev',
    owner_email: 'dev@example.com',
    status: 'online',
    last_seen_at: '2026-11-20T11:00:00.000Z',
    last_inventory_at: '2026-11-20T10:00:00.000Z',
    last_event_at: null,
    created_at: '2026-11-15T00:00:00.000Z',
    updated_at: '2026-11-20T11:00:00.000Z',
    agent_version: '0.9.1',
    agents: 1,
    mcps: 2,
  },
  agents: [
    {
      agent_type: 'claude-code',
      display_name: 'Claude Code',
      version: '2.0.14',
      capture: 'hooks',
      first_seen_at: '2026-11-15T00:00:00.000Z',
      last_seen_at: '2026-11-20T10:00:00.000Z',
    },
  ],
  mcps: [
    {
      agent_type: 'claude-code',
      name: 'github',
      enabled: true,
      transport: 'stdio',
      scope: 'user',
      source: { type: 'npm', name: '@modelcontextprotocol/server-github', version: '2025.4.8' },
      fingerprint: 'f'.repeat(64),
      first_seen_at: '2026-11-15T00:00:00.000Z',
      last_seen_at: '2026-11-20T10:00:00.000Z',
    },
    {
      agent_type: 'claude-code',
      name: 'internal-wiki',
      enabled: false,
      transport: 'http',
      scope: null,
      source: null,
      fingerprint: null,
      first_seen_at: '2026-11-15T00:00:00.000Z',
      last_seen_at: '2026-11-20T09:00:00.000Z',
    },
  ],
  as_of: '2026-11-20T11:30:00.000Z',
};

export const REQUEST_ID = '0a1b2c3d-0000-4000-8000-00000000000a';
export const scope = {
  datasources: [
    {
      datasets: [
        { namespace: 'orders', source: { table: 'orders' }, columns: [{ name: 'id' }], joins: [] },
        { namespace: 'customers', source: { table: 'customers' }, columns: [{ name: 'id' }], joins: [] },
      ],
    },
  ],
} as unknown as AccessChangeSource['request']['scope'];
export const request: AccessChangeSource['request'] = {
  id: REQUEST_ID,
  requester: { id: 'auth0|dev', name: 'Dev', email: 'dev@example.com' },
  scope,
  datasource_names: ['warehouse'],
  valid_until: '2026-11-21T10:00:00.000Z',
};
export const auditRecord = (
  action_type: string,
  actor_email: string,
  actor_id: string,
  ip_address: string,
) => ({
  id: '912',
  action_type,
  actor_email,
  actor_id,
  app_name: '',
  container_id: '',
  environment_id: '',
  environment_name: '',
  ip_address,
  level: 'info',
  resource_id: REQUEST_ID,
  resource_type: 'request',
  resource_name: 'Orders analysis',
  stage: '',
  source: 'api' as const,
  timestamp: '2026-11-20T10:00:00.000Z',
  created_at: '2026-11-20T10:00:00.000Z',
  metadata: {},
});
export const SHA = 'a'.repeat(64);
export const usage = (
  action_type: string,
  metadata: Record<string, unknown>,
  ip_address = '203.0.113.7',
): DatastoreQuerySource => ({
  usage: { id: '77', action_type, ip_address, timestamp: '2026-11-20T10:00:00.000Z', metadata },
  request: { id: REQUEST_ID, environment_id: 'env-1', datasource_names: ['warehouse'] },
});
export const ALERT_ID = '5e6f7a8b-0000-4000-8000-000000000005';
export const alert: AlertSource = {
  id: ALERT_ID,
  kind: 'tool_definition_changed',
  subject: 'npm:@x/y@2.0.0: read_file',
  status: 'open',
  details: { identity: 'npm:@x/y', version: '2.0.0', tool: 'read_file', hashes: [] },
  device_count: 3,
  first_seen_at: '2026-11-20T09:00:00.000Z',
  last_seen_at: '2026-11-20T10:00:00.000Z',
  acknowledged_at: null,
  acknowledged_by: null,
  acknowledge_note: null,
};
