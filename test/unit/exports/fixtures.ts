// Stored events as GET …/observability/events/{id} returns them, for the export mappings' golden tests. Each carries
// a prompt, metadata with tool arguments and a result, and an error message echoing arguments: none may be exported.
import type { StoredEvent } from '../../../shared/exports/source.ts';

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
