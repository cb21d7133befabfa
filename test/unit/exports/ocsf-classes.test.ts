// Golden tests of the other OCSF classes: a device's inventory (5001, 5020), a request's grant and end (3005), a
// proxied query (6005) and an alert (2004). Each expected event is written out by hand from the OCSF 1.8.0
// definitions (docs/exports.md), and every event the mappings yield is validated against our written-down schema.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import {
  toOcsfDatastoreActivity,
  toOcsfDetectionFinding,
  toOcsfDeviceInventory,
  toOcsfSoftwareInventory,
  toOcsfUserAccess,
} from '../../../shared/exports/ocsf.ts';
import type { AlertSource } from '../../../shared/exports/source.ts';
import {
  ALERT_ID,
  alert,
  auditRecord,
  DEVICE_ID,
  inventory,
  REQUEST_ID,
  request,
  SHA,
  usage,
} from './fixtures.ts';
import {
  validateDatastoreActivity,
  validateDetectionFinding,
  validateDeviceInventory,
  validateSoftwareInventory,
  validateUserAccess,
} from './ocsf-schema.ts';

const PRODUCT = { name: 'Agent Control Plane', vendor_name: 'agent-control-plane' };
const meta = (uid: string, extra: Record<string, unknown> = {}) => ({
  version: '1.8.0',
  product: PRODUCT,
  uid,
  ...extra,
});

function valid<T>(validate: ValidateFunction, event: T): T {
  assert.ok(validate(event), JSON.stringify(validate.errors));
  return event;
}

// 2026-11-20T09:00:00Z, 10:00:00Z, 11:00:00Z
const H9 = 1795165200000;
const H10 = 1795168800000;
const H11 = 1795172400000;
const ENROLLED = 1794700800000; // 2026-11-15T00:00:00Z

/** What the device always is, whatever it has reported. */
const DEVICE_FACTS = {
  uid: DEVICE_ID,
  name: 'C02XK0AAJGH5',
  type_id: 0,
  type: 'Unknown',
  vendor_name: 'Apple',
  model: 'MacBookPro18,3',
  hw_info: { serial_number: 'C02XK0AAJGH5' },
  first_seen_time: ENROLLED,
};
const DEVICE = {
  ...DEVICE_FACTS,
  owner: { uid: 'auth0|dev', email_addr: 'dev@example.com' },
  last_seen_time: H11,
  agent_list: [
    { name: 'Agent Control Plane agent', type_id: 99, type: 'AI agent control', version: '0.9.1' },
  ],
};
const COLLECT = { activity_id: 2, activity_name: 'Collect', category_uid: 5, category_name: 'Discovery' };
const INFO = { severity_id: 1, severity: 'Informational' };

describe('exports: OCSF inventory classes', () => {
  test('a device as Device Inventory Info (5001, Collect): serial, brand, model, owner, our agent', () => {
    assert.deepEqual(valid(validateDeviceInventory, toOcsfDeviceInventory(inventory)), {
      ...COLLECT,
      class_uid: 5001,
      class_name: 'Device Inventory Info',
      type_uid: 500102,
      type_name: 'Device Inventory Info: Collect',
      time: H10,
      ...INFO,
      message: '1 agents, 2 MCP servers',
      device: DEVICE,
      metadata: meta(`inventory:${DEVICE_ID}:${H10}`),
    });
  });

  test('a device never seen and without an agent version: no last_seen_time, no agent_list; time is the read', () => {
    const bare = {
      ...inventory,
      device: {
        ...inventory.device,
        last_seen_at: null,
        last_inventory_at: null,
        agent_version: null,
        owner_email: '',
      },
    };
    const event = valid(validateDeviceInventory, toOcsfDeviceInventory(bare));
    assert.equal(event.time, 1795174200000); // 2026-11-20T11:30:00Z
    assert.deepEqual(event.device, { ...DEVICE_FACTS, owner: { uid: 'auth0|dev' } });
  });

  test('its software as Software Inventory Info (5020): one event per AI agent and per MCP server', () => {
    const events = toOcsfSoftwareInventory(inventory).map((e) => valid(validateSoftwareInventory, e));
    const base = {
      ...COLLECT,
      class_uid: 5020,
      class_name: 'Software Inventory Info',
      type_uid: 502002,
      type_name: 'Software Inventory Info: Collect',
      ...INFO,
      device: DEVICE,
    };
    assert.deepEqual(events, [
      {
        ...base,
        time: H10,
        package: { name: 'claude-code', version: '2.0.14', type_id: 1, type: 'Application' },
        metadata: meta(`software:${DEVICE_ID}:claude-code:${H10}`, {
          labels: ['ai_agent', 'agent_type:claude-code'],
        }),
      },
      {
        ...base,
        time: H10,
        package: {
          name: '@modelcontextprotocol/server-github',
          version: '2025.4.8',
          type_id: 1,
          type: 'Application',
          package_manager: 'npm',
          purl: 'pkg:npm/%40modelcontextprotocol/server-github@2025.4.8',
        },
        metadata: meta(`software:${DEVICE_ID}:claude-code:github:user:${'f'.repeat(64)}:${H10}`, {
          labels: [
            'mcp_server',
            'agent_type:claude-code',
            'mcp_name:github',
            'transport:stdio',
            'scope:user',
          ],
        }),
      },
      {
        ...base,
        time: H9,
        package: { name: 'internal-wiki', version: 'unknown', type_id: 1, type: 'Application' },
        metadata: meta(`software:${DEVICE_ID}:claude-code:internal-wiki:::${H9}`, {
          labels: [
            'mcp_server',
            'agent_type:claude-code',
            'mcp_name:internal-wiki',
            'transport:http',
            'disabled',
          ],
        }),
      },
    ]);
  });

  test('a PyPI server gets its purl in lower case; an OCI one a package manager and no purl', () => {
    const [first] = inventory.mcps;
    assert.ok(first);
    const withSource = (source: NonNullable<(typeof first)['source']>) =>
      toOcsfSoftwareInventory({ ...inventory, agents: [], mcps: [{ ...first, source }] })[0]?.package;
    assert.deepEqual(withSource({ type: 'pypi', name: 'MCP-Server-Fetch', version: '1.0' }), {
      name: 'MCP-Server-Fetch',
      version: '1.0',
      type_id: 1,
      type: 'Application',
      package_manager: 'pypi',
      purl: 'pkg:pypi/mcp-server-fetch@1.0',
    });
    assert.deepEqual(withSource({ type: 'oci', name: 'ghcr.io/acme/mcp' }), {
      name: 'ghcr.io/acme/mcp',
      version: 'unknown',
      type_id: 1,
      type: 'Application',
      package_manager: 'oci',
    });
  });

  test('the schemas refuse what OCSF does not allow (they can fail)', () => {
    const device = toOcsfDeviceInventory(inventory);
    for (const bad of [
      { ...device, activity_id: 3 },
      { ...device, class_uid: 5020 },
      { ...device, device: { ...device.device, type_id: 16 } },
      { ...device, device: { ...device.device, owner: { email_addr: 'dev@example.com' } } },
      { ...device, device: undefined },
    ]) {
      assert.equal(validateDeviceInventory(bad), false, JSON.stringify(bad).slice(0, 120));
    }
    const [software] = toOcsfSoftwareInventory(inventory);
    assert.ok(software);
    for (const bad of [
      { ...software, package: { name: 'x' } },
      { ...software, package: { ...software.package, version: '' } },
      { ...software, type_uid: 500102 },
    ]) {
      assert.equal(validateSoftwareInventory(bad), false, JSON.stringify(bad).slice(0, 120));
    }
  });
});

const IAM = { category_uid: 3, category_name: 'Identity & Access Management', class_uid: 3005 };
const REQUESTER = { uid: 'auth0|dev', name: 'Dev', email_addr: 'dev@example.com' };
const RESOURCES = [
  { uid: `${REQUEST_ID}/orders`, name: 'orders', type: 'Dataset' },
  { uid: `${REQUEST_ID}/customers`, name: 'customers', type: 'Dataset' },
];

describe('exports: OCSF User Access Management', () => {
  test('an approval: Assign Privileges (1), query on the datasets, the approver as actor', () => {
    const source = {
      audit: auditRecord('request.approved', 'admin@example.com', 'auth0|admin', '198.51.100.4'),
      request,
    };
    assert.deepEqual(valid(validateUserAccess, toOcsfUserAccess(source)), {
      activity_id: 1,
      activity_name: 'Assign Privileges',
      ...IAM,
      class_name: 'User Access Management',
      type_uid: 300501,
      type_name: 'User Access Management: Assign Privileges',
      time: H10,
      ...INFO,
      status_id: 1,
      status: 'Success',
      message: `Request ${REQUEST_ID} approved: query on orders, customers until 2026-11-21T10:00:00.000Z`,
      user: REQUESTER,
      actor: { user: { uid: 'auth0|admin', email_addr: 'admin@example.com' } },
      privileges: ['query'],
      resources: RESOURCES,
      src_endpoint: { ip: '198.51.100.4' },
      metadata: meta('audit:912', { logged_time: H10, correlation_uid: REQUEST_ID }),
    });
  });

  test('an expiry: Revoke Privileges (2) by the service itself, no address', () => {
    const source = { audit: auditRecord('request.expired', 'system', 'system', ''), request };
    assert.deepEqual(valid(validateUserAccess, toOcsfUserAccess(source)), {
      activity_id: 2,
      activity_name: 'Revoke Privileges',
      ...IAM,
      class_name: 'User Access Management',
      type_uid: 300502,
      type_name: 'User Access Management: Revoke Privileges',
      time: H10,
      ...INFO,
      status_id: 1,
      status: 'Success',
      message: `Request ${REQUEST_ID} expired`,
      user: REQUESTER,
      actor: { user: { uid: 'system', name: 'system', type_id: 3, type: 'System' } },
      privileges: ['query'],
      resources: RESOURCES,
      metadata: meta('audit:912', { logged_time: H10, correlation_uid: REQUEST_ID }),
    });
  });

  test('a revocation is Revoke Privileges too; other audit actions are no access change', () => {
    const revoked = toOcsfUserAccess({
      audit: auditRecord('request.revoked', 'dev@example.com', 'auth0|dev', '203.0.113.7'),
      request,
    });
    assert.equal(valid(validateUserAccess, revoked)?.type_uid, 300502);
    for (const action of ['request.created', 'request.denied', 'request.activated', 'device.registered']) {
      assert.equal(
        toOcsfUserAccess({ audit: auditRecord(action, 'a@example.com', 'a', ''), request }),
        undefined,
      );
    }
  });

  test('the schema refuses what OCSF does not allow (it can fail)', () => {
    const good = toOcsfUserAccess({
      audit: auditRecord('request.approved', 'a@example.com', 'a', ''),
      request,
    });
    assert.ok(good && validateUserAccess(good));
    for (const bad of [
      { ...good, activity_id: 3 },
      { ...good, privileges: [] },
      { ...good, user: { email_addr: 'dev@example.com' } },
      { ...good, src_endpoint: { ip: 'not-an-ip' } },
      { ...good, type_uid: 300503 },
    ]) {
      assert.equal(validateUserAccess(bad), false, JSON.stringify(bad).slice(0, 120));
    }
  });
});

const DATASTORE = {
  activity_id: 4,
  activity_name: 'Query',
  category_uid: 6,
  category_name: 'Application Activity',
  class_uid: 6005,
  class_name: 'Datastore Activity',
  type_uid: 600504,
  type_name: 'Datastore Activity: Query',
  time: H10,
  actor: { user: { uid: 'auth0|dev', email_addr: 'dev@example.com' } },
  database: { uid: 'env-1', name: 'warehouse', type_id: 1, type: 'Relational' },
  type_id: 1,
  type: 'Database',
  metadata: meta('usage:77', { profiles: ['security_control'], correlation_uid: REQUEST_ID }),
};
const who = { actor_id: 'auth0|dev', actor_email: 'dev@example.com' };

describe('exports: OCSF Datastore Activity', () => {
  test('an executed query: Query (4), Success, Allowed, its duration, the SQL only as its hash', () => {
    const source = usage('query', {
      ...who,
      sql_sha256: SHA,
      row_count: 12,
      truncated: false,
      duration_ms: 31,
    });
    assert.deepEqual(valid(validateDatastoreActivity, toOcsfDatastoreActivity(source)), {
      ...DATASTORE,
      ...INFO,
      status_id: 1,
      status: 'Success',
      action_id: 1,
      action: 'Allowed',
      disposition_id: 1,
      disposition: 'Allowed',
      duration: 31,
      src_endpoint: { ip: '203.0.113.7' },
      unmapped: { sql_sha256: SHA, row_count: 12, truncated: false },
    });
  });

  test('a refused query: Failure with the guard code, Denied / Blocked, Medium', () => {
    const source = usage('query_refused', { ...who, sql_sha256: SHA, error: 'sql_not_allowed' });
    assert.deepEqual(valid(validateDatastoreActivity, toOcsfDatastoreActivity(source)), {
      ...DATASTORE,
      severity_id: 3,
      severity: 'Medium',
      status_id: 2,
      status: 'Failure',
      status_code: 'sql_not_allowed',
      action_id: 2,
      action: 'Denied',
      disposition_id: 2,
      disposition: 'Blocked',
      src_endpoint: { ip: '203.0.113.7' },
      unmapped: { sql_sha256: SHA },
    });
  });

  test('a failed query: Failure, Low, still Allowed; an address that is not one is the endpoint name', () => {
    const source = usage(
      'query_failed',
      { ...who, sql_sha256: SHA, error: 'query_timeout', duration_ms: 5000 },
      'unknown-proxy',
    );
    assert.deepEqual(valid(validateDatastoreActivity, toOcsfDatastoreActivity(source)), {
      ...DATASTORE,
      severity_id: 2,
      severity: 'Low',
      status_id: 2,
      status: 'Failure',
      status_code: 'query_timeout',
      action_id: 1,
      action: 'Allowed',
      disposition_id: 1,
      disposition: 'Allowed',
      duration: 5000,
      src_endpoint: { name: 'unknown-proxy' },
      unmapped: { sql_sha256: SHA },
    });
  });

  test('the schema refuses what OCSF does not allow (it can fail)', () => {
    const good = toOcsfDatastoreActivity(usage('query', { ...who, sql_sha256: SHA }));
    for (const bad of [
      { ...good, activity_id: 11 },
      { ...good, database: undefined },
      { ...good, database: { name: 'x' } },
      { ...good, src_endpoint: {} },
      { ...good, actor: undefined },
      { ...good, unmapped: { sql: 'SELECT 1' } },
      { ...good, query_info: { query_string: 'SELECT 1' } },
    ]) {
      assert.equal(validateDatastoreActivity(bad), false, JSON.stringify(bad).slice(0, 120));
    }
  });
});

const FINDING = {
  category_uid: 2,
  category_name: 'Findings',
  class_uid: 2004,
  class_name: 'Detection Finding',
  time: H9,
  start_time: H9,
  end_time: H10,
  is_alert: true,
};

describe('exports: OCSF Detection Finding', () => {
  test('an open rug-pull alert as opened: Create, New, High, the server identity as the resource', () => {
    assert.deepEqual(valid(validateDetectionFinding, toOcsfDetectionFinding(alert, 0)), {
      ...FINDING,
      activity_id: 1,
      activity_name: 'Create',
      type_uid: 200401,
      type_name: 'Detection Finding: Create',
      severity_id: 4,
      severity: 'High',
      status_id: 1,
      status: 'New',
      message: 'npm:@x/y@2.0.0: read_file (3 devices)',
      finding_info: {
        uid: ALERT_ID,
        title: 'Tool definition changed: npm:@x/y@2.0.0: read_file',
        types: ['tool_definition_changed'],
        analytic: {
          uid: 'tool_definition_changed',
          name: 'tool_definition_changed',
          type_id: 1,
          type: 'Rule',
        },
        created_time: H9,
        first_seen_time: H9,
        last_seen_time: H10,
        modified_time: H10,
      },
      resources: [{ name: 'npm:@x/y', type: 'MCP Server' }],
      metadata: meta(`alert:${ALERT_ID}:0`, { correlation_uid: ALERT_ID }),
    });
  });

  test('the same alert found again on more devices: Update, still New, its own event', () => {
    const grown = valid(
      validateDetectionFinding,
      toOcsfDetectionFinding({ ...alert, device_count: 5, last_seen_at: '2026-11-20T11:00:00.000Z' }, 1),
    );
    assert.equal(grown.activity_id, 2);
    assert.equal(grown.activity_name, 'Update');
    assert.equal(grown.type_uid, 200402);
    assert.equal(grown.status_id, 1);
    assert.equal(grown.status, 'New');
    assert.equal(grown.message, 'npm:@x/y@2.0.0: read_file (5 devices)');
    assert.equal(grown.finding_info.last_seen_time, H11);
    assert.equal(grown.finding_info.modified_time, H11);
    assert.equal(grown.finding_info.created_time, H9);
    assert.equal(grown.metadata.uid, `alert:${ALERT_ID}:1`);
  });

  test('an acknowledged spike: Update, In Progress, Statistical, no resource, modified when acknowledged', () => {
    const spike: AlertSource = {
      ...alert,
      kind: 'denied_spike',
      subject: 'denied calls from 2026-11-20T09:00:00Z',
      status: 'acknowledged',
      details: { denied: 120, baseline_per_window: 4, window_s: 900 },
      device_count: 1,
      acknowledged_at: '2026-11-20T11:00:00.000Z',
      acknowledged_by: 'admin@example.com',
    };
    assert.deepEqual(valid(validateDetectionFinding, toOcsfDetectionFinding(spike, 1)), {
      ...FINDING,
      activity_id: 2,
      activity_name: 'Update',
      type_uid: 200402,
      type_name: 'Detection Finding: Update',
      severity_id: 3,
      severity: 'Medium',
      status_id: 2,
      status: 'In Progress',
      message: 'denied calls from 2026-11-20T09:00:00Z (1 device)',
      finding_info: {
        uid: ALERT_ID,
        title: 'Spike in denied tool calls: denied calls from 2026-11-20T09:00:00Z',
        types: ['denied_spike'],
        analytic: { uid: 'denied_spike', name: 'denied_spike', type_id: 3, type: 'Statistical' },
        created_time: H9,
        first_seen_time: H9,
        last_seen_time: H10,
        modified_time: H11,
      },
      metadata: meta(`alert:${ALERT_ID}:1`, { correlation_uid: ALERT_ID }),
    });
  });

  test('every kind maps to a valid finding; a server known by name alone is named', () => {
    for (const kind of ['new_server', 'version_changed', 'source_changed', 'denied_server'] as const) {
      const event = valid(
        validateDetectionFinding,
        toOcsfDetectionFinding({ ...alert, kind, details: { name: 'github' } }, 0),
      );
      assert.deepEqual(event.resources, [{ name: 'github', type: 'MCP Server' }]);
    }
  });

  test('the schema refuses what OCSF does not allow (it can fail)', () => {
    const good = toOcsfDetectionFinding(alert, 0);
    for (const bad of [
      { ...good, finding_info: { title: 'x' } },
      { ...good, status_id: 7 },
      { ...good, activity_id: 4 },
      { ...good, finding_info: { ...good.finding_info, analytic: { name: 'x' } } },
      { ...good, is_alert: 'yes' },
    ]) {
      assert.equal(validateDetectionFinding(bad), false, JSON.stringify(bad).slice(0, 120));
    }
  });
});
