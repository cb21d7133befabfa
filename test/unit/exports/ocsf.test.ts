// Golden tests of the OCSF mapping: each expected event is written out by hand from the OCSF 1.8.0 definitions
// (docs/exports.md), and every event the mapping yields is validated against our written-down schema of them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toOcsfApiActivity } from '../../../shared/exports/ocsf.ts';
import type { ExportSource } from '../../../shared/exports/source.ts';
import { allowedEvent, bareEvent, DEVICE_ID, deniedEvent, errorEvent } from './fixtures.ts';
import { validateOcsf } from './ocsf-schema.ts';

const T0 = 1795168800000; // 2026-11-20T10:00:00Z
const RECEIVED = 1795168805000; // 2026-11-20T10:00:05Z
const METADATA = {
  version: '1.8.0',
  product: { name: 'Agent Control Plane', vendor_name: 'agent-control-plane' },
  profiles: ['ai_operation', 'security_control'],
  logged_time: RECEIVED,
};
const CLASS = {
  activity_id: 99,
  activity_name: 'Invoke',
  category_uid: 6,
  category_name: 'Application Activity',
  class_uid: 6003,
  class_name: 'API Activity',
  type_uid: 600399,
  type_name: 'API Activity: Invoke',
};

const ALLOWED = {
  action_id: 1,
  action: 'Allowed',
  disposition_id: 1,
  disposition: 'Allowed',
};
const SUCCESS = { severity_id: 1, severity: 'Informational', status_id: 1, status: 'Success', ...ALLOWED };
const DEV_ENDPOINT = { uid: DEVICE_ID, name: 'C02XK0AAJGH5', ip: '203.0.113.7' };
const devActor = (session: string) => ({
  app_name: 'claude-code',
  user: { name: 'dev@example.com', email_addr: 'dev@example.com' },
  session: { uid: session },
});
const toolContext = (server: string, prompt_tokens: number, completion_tokens: number, uid?: string) => ({
  ...(uid ? { uid } : {}),
  ai_role_id: 3,
  ai_role: 'Tool',
  service: { name: server },
  prompt_tokens,
  completion_tokens,
  total_tokens: prompt_tokens + completion_tokens,
});

/** Maps, and fails the test if the schema refuses what came out. */
function mapped(source: ExportSource) {
  const event = toOcsfApiActivity(source);
  assert.ok(validateOcsf(event), JSON.stringify(validateOcsf.errors));
  return event;
}

describe('exports: OCSF API Activity', () => {
  test('an allowed call: Invoke (99), Success, Allowed, the server as api.service and the tool as a resource', () => {
    assert.deepEqual(mapped({ event: allowedEvent, transport: 'stdio', tool_call_id: '17' }), {
      ...CLASS,
      time: T0,
      start_time: T0,
      end_time: T0 + 250,
      duration: 250,
      ...SUCCESS,
      api: { operation: 'tools/call', service: { name: 'github' }, request: { uid: '17' } },
      resources: [{ name: 'create_issue', type: 'MCP Tool' }],
      actor: devActor('sess-42'),
      src_endpoint: DEV_ENDPOINT,
      message_context: toolContext('github', 1200, 80, 'sess-42'),
      metadata: { ...METADATA, uid: '4711', correlation_uid: 'sess-42' },
    });
  });

  test('a call an enforce rule denied: Failure with the deny code, Denied / Blocked, the rule as the policy', () => {
    assert.deepEqual(mapped({ event: deniedEvent, transport: 'http' }), {
      ...CLASS,
      time: T0,
      start_time: T0,
      end_time: T0,
      duration: 0,
      severity_id: 3,
      severity: 'Medium',
      status_id: 2,
      status: 'Failure',
      status_code: 'policy_denied',
      action_id: 2,
      action: 'Denied',
      disposition_id: 2,
      disposition: 'Blocked',
      policy: { uid: 'no-prod-writes@7', name: 'no-prod-writes', version: '7' },
      api: { operation: 'tools/call', service: { name: 'postgres-prod' } },
      resources: [{ name: 'query', type: 'MCP Tool' }],
      actor: devActor('sess-43'),
      src_endpoint: DEV_ENDPOINT,
      message_context: toolContext('postgres-prod', 0, 0, 'sess-43'),
      metadata: { ...METADATA, uid: '4713', correlation_uid: 'sess-43' },
    });
  });

  test('a failed call: status_id 2 with the error code (tool_error without one); the action stays Allowed', () => {
    assert.deepEqual(mapped({ event: errorEvent, error_code: '-32603' }), {
      ...CLASS,
      time: T0,
      start_time: T0,
      end_time: T0 + 1500,
      duration: 1500,
      severity_id: 2,
      severity: 'Low',
      status_id: 2,
      status: 'Failure',
      status_code: '-32603',
      ...ALLOWED,
      api: { operation: 'tools/call', service: { name: 'filesystem' } },
      resources: [{ name: 'read_file', type: 'MCP Tool' }],
      actor: devActor('sess-42'),
      src_endpoint: DEV_ENDPOINT,
      message_context: toolContext('filesystem', 10, 0, 'sess-42'),
      metadata: { ...METADATA, uid: '4714', correlation_uid: 'sess-42' },
    });
    assert.equal(mapped({ event: errorEvent }).status_code, 'tool_error');
  });

  test('missing optional fields: no user, session, ip, request or correlation; still valid', () => {
    assert.deepEqual(mapped({ event: bareEvent }), {
      ...CLASS,
      time: T0,
      start_time: T0,
      end_time: T0 + 40,
      duration: 40,
      ...SUCCESS,
      api: { operation: 'tools/call', service: { name: 'linear' } },
      resources: [{ name: 'list_issues', type: 'MCP Tool' }],
      actor: { app_name: 'cursor' },
      src_endpoint: { uid: DEVICE_ID, name: 'C02XK0AAJGH5' },
      message_context: toolContext('linear', 0, 0),
      metadata: { ...METADATA, uid: '4712' },
    });
  });

  test('a source address that is not an IP address is left out; an IPv6 one is kept', () => {
    assert.deepEqual(mapped({ event: { ...bareEvent, source_ip: 'unknown' } }).src_endpoint, {
      uid: DEVICE_ID,
      name: 'C02XK0AAJGH5',
    });
    assert.equal(
      mapped({ event: { ...bareEvent, source_ip: '2001:db8::1' } }).src_endpoint.ip,
      '2001:db8::1',
    );
  });

  test('a rule without a version is the policy uid and name alone', () => {
    const event = mapped({ event: { ...deniedEvent, rule_applied: 'no-prod-writes' } });
    assert.deepEqual(event.policy, { uid: 'no-prod-writes', name: 'no-prod-writes' });
  });

  test('the written-down schema refuses what OCSF does not allow (it can fail)', () => {
    const good = toOcsfApiActivity({ event: allowedEvent });
    assert.ok(validateOcsf(good));
    for (const bad of [
      { ...good, action_id: 99 },
      { ...good, activity_id: 5 },
      { ...good, class_uid: 6001 },
      { ...good, metadata: { ...good.metadata, version: '1.7.0' } },
      { ...good, api: { service: { name: 'github' } } },
      { ...good, src_endpoint: {} },
      { ...good, src_endpoint: { uid: DEVICE_ID, ip: 'not-an-ip' } },
      { ...good, time: '2026-11-20T10:00:00Z' },
      { ...good, actor: { app_name: 'cursor', user: { email_addr: 'dev@example.com' } } },
      { ...good, prompt: 'x' },
    ]) {
      assert.equal(validateOcsf(bad), false, JSON.stringify(bad).slice(0, 120));
    }
  });
});
