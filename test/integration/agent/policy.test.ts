// The MCP policy end to end (docs/policy.md): an admin saves a policy on the real local service, the daemon fetches
// it into the device's state directory, and the clients' hooks are played as the clients run them (the installed
// command, through sh, payload on stdin): a deny in Claude Code's documented answer, an allow, an audit-mode match
// reported as would-deny, a policy change picked up through the ETag, and a device with no usable copy under each
// failure mode. What the service stored is read back from it. One driver (PGlite): what is tested is the agent.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { DeviceClient } from '#agent/client.ts';
import { type Daemon, startDaemon } from '#agent/daemon/daemon.ts';
import { rotatingLog } from '#agent/daemon/log.ts';
import { loadDaemonStatus } from '#agent/daemon/status.ts';
import { installHooks } from '#agent/hooks/install.ts';
import { type PolicyCache, readPolicyCache, savePolicyCache } from '#agent/hooks/policy.ts';
import { createDeviceIdentity } from '#agent/identity.ts';
import { openSpool } from '#agent/spool/spool.ts';
import { saveState } from '#agent/state.ts';
import type { LocalService } from '#local-server/service.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { createLogger } from '#shared/core/logger.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { provisionDatabase } from '#test/support/databases.ts';
import { freePort } from '#test/support/free-port.ts';
import {
  buildHookBundle,
  fixture,
  fixtureHome,
  type HookClientId,
  installedCommand,
  runHookCommand,
  spooledEvents,
} from '#test/support/hook-runner.ts';
import { startCheckedService, TEST_ADMIN, testConfig } from '#test/support/service.ts';
import { until } from '#test/support/until.ts';

const bundle = buildHookBundle();
type Json = Record<string, unknown>;

const POLICY_V1 = {
  rules: [
    {
      id: 'no-memory',
      effect: 'deny',
      match: { server: 'memory' },
      reason: 'The memory server is not approved.',
    },
    {
      id: 'watch-issues',
      effect: 'deny',
      mode: 'audit',
      match: { tool: 'create_*', agent_type: 'cursor' },
      reason: 'Agents will soon not create issues.',
    },
    {
      id: 'sales-no-github',
      effect: 'deny',
      match: { server: 'github', group: 'finance' },
      reason: 'Not for finance.',
    },
  ],
  default: { effect: 'allow', reason: 'No rule applies.' },
  no_cache: 'open',
};

/** Hooks installed for these clients in a home of their own, run as the clients run them. */
function laptop(clients: HookClientId[]) {
  const h = fixtureHome(clients);
  installHooks({ stateDir: h.stateDir, env: h.env, hookEntry: bundle });
  const cwd = mkdtempSync(join(tmpdir(), 'project-'));
  const env = { PATH: process.env.PATH, HOME: h.home };
  const run = (client: HookClientId, event: string, payload: string) =>
    runHookCommand(installedCommand(h.file(client), client, event), payload, { cwd, env });
  const settings = (value: Json) => {
    mkdirSync(h.stateDir, { recursive: true });
    writeFileSync(join(h.stateDir, 'config.json'), JSON.stringify(value));
  };
  return { ...h, run, settings };
}

/** Claude Code's PreToolUse / PostToolUse of one call to `server`'s `tool`. */
function claudeCall(server: string, tool: string, id: string) {
  const pre = JSON.parse(fixture('claude-code', 'pre-tool-use.json')) as Json;
  const call = { ...pre, tool_name: `mcp__${server}__${tool}`, tool_use_id: id };
  return {
    pre: JSON.stringify(call),
    post: JSON.stringify({
      ...call,
      hook_event_name: 'PostToolUse',
      tool_response: { content: [{ type: 'text', text: 'ok' }] },
    }),
  };
}

const claudeDeny = (reason: string) =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  });

describe('the MCP policy from the admin to the hook', () => {
  const root = mkdtempSync(join(tmpdir(), 'acp-policy-'));
  let database: { dsn: string; cleanup(): Promise<void> };
  let service: LocalService;
  let baseUrl: string;
  let admin: string;
  let deviceId: string;
  let daemon: Daemon;
  const device = laptop(['claude-code', 'cursor']);

  const adminCall = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as { data: Json } };
  };
  /** The events the service stored for the device, by the tool called. */
  const storedEvents = async () =>
    queryRows(
      service.runtime.database.db,
      sql`SELECT tool, mcp_name, result, deny_code, deny_reason, rule_applied, group_name, metadata
        FROM observability_events WHERE device_id = ${deviceId}::uuid ORDER BY id`,
    );
  const storedFor = async (tool: string, count = 1) =>
    until(`${count} stored events of ${tool}`, async () => {
      const rows = (await storedEvents()).filter((e) => e.tool === tool);
      return rows.length >= count ? rows : undefined;
    });

  before(async () => {
    database = await provisionDatabase('pglite');
    const port = await freePort();
    const config = testConfig({ port, dashboard_url: 'http://dashboard.test', db: { dsn: database.dsn } });
    service = (await startCheckedService({ config, log: createLogger({ test: true }) })).service;
    baseUrl = `http://127.0.0.1:${port}`;
    const login = await fetch(`${baseUrl}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TEST_ADMIN),
    });
    admin = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const saved = await adminCall('PUT', '/v1/admin/policy', { policy: POLICY_V1, reason: 'First rules' });
    assert.equal(saved.status, 200);
    const identity = await createDeviceIdentity('p256');
    const { body } = await new DeviceClient({ baseUrl, identity }).register(admin, {
      serialNumber: 'POLICY-1',
      brand: 'Test',
      model: 'Laptop',
    });
    deviceId = body.deviceId;
    saveState(device.stateDir, { identity, deviceId, baseUrl });
    device.settings({ group: 'sales', deviceTags: ['laptop'] });
    daemon = await startDaemon({
      stateDir: device.stateDir,
      baseUrl,
      identity,
      version: 'test',
      inventory: { scan: async () => ({ body: { agents: [] }, watchedPaths: [] }) },
      spool: openSpool(device.stateDir),
      log: rotatingLog(join(device.stateDir, 'logs', 'agent.log')),
      settings: {
        debounceMs: 100,
        flushDelayMs: 100,
        rescanIntervalMs: 3_600_000,
        inventoryIntervalMs: 3_600_000,
        spoolPollMs: 3_600_000,
        policyIntervalMs: 300,
        backoff: { baseMs: 100, capMs: 1000, maxRetryAfterMs: 10_000 },
      },
    });
    await until('the first policy', () => readPolicyCache(device.stateDir)?.version === 1);
  });
  after(async () => {
    await daemon?.stop();
    await service?.stop();
    await database?.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  test('a deny: the client reads the reason; the service stores denied with its code, reason and rule@version', async () => {
    const call = claudeCall('memory', 'create_entities', 'toolu_deny_1');
    const pre = await device.run('claude-code', 'PreToolUse', call.pre);
    assert.equal(pre.code, 0, pre.stderr);
    assert.equal(pre.stdout, claudeDeny('The memory server is not approved.'));
    const [event] = await storedFor('create_entities');
    assert.deepEqual(
      [event?.result, event?.deny_code, event?.deny_reason, event?.rule_applied, event?.group_name],
      ['denied', 'policy_denied', 'The memory server is not approved.', 'no-memory@1', 'sales'],
    );
    assert.deepEqual((event?.metadata as Json | undefined)?.device_tags, ['laptop']);
  });

  test('an allow: silence for Claude Code, the call reported with the rule that allowed it', async () => {
    const call = claudeCall('github', 'search_code', 'toolu_allow_1');
    const pre = await device.run('claude-code', 'PreToolUse', call.pre);
    assert.deepEqual([pre.code, pre.stdout], [0, ''], pre.stderr);
    await device.run('claude-code', 'PostToolUse', call.post);
    const [event] = await storedFor('search_code');
    assert.deepEqual([event?.result, event?.deny_code, event?.rule_applied], ['allowed', null, 'default@1']);
  });

  test('an audit-mode match: Cursor is allowed; the call is reported as would-deny with the audit rule', async () => {
    const pre = await device.run(
      'cursor',
      'beforeMCPExecution',
      fixture('cursor', 'before-mcp-execution.json'),
    );
    assert.deepEqual([pre.code, JSON.parse(pre.stdout)], [0, { permission: 'allow' }], pre.stderr);
    await device.run('cursor', 'afterMCPExecution', fixture('cursor', 'after-mcp-execution.json'));
    const [event] = await storedFor('create_issue');
    assert.deepEqual(
      [event?.result, event?.deny_code, event?.deny_reason, event?.rule_applied],
      ['allowed', 'policy_would_deny', 'Agents will soon not create issues.', 'watch-issues@1'],
    );
    assert.equal((event?.metadata as Json | undefined)?.policy_rule, 'default@1');
  });

  test('a policy change reaches the device through the ETag: 304s keep the copy, then the new version decides', async () => {
    const first = readPolicyCache(device.stateDir) as PolicyCache;
    // The daemon asks again every interval; unchanged, the service answers 304 and the copy is only confirmed.
    await until(
      'a confirmation of the copy',
      () => (readPolicyCache(device.stateDir)?.checkedAt ?? 0) > first.checkedAt,
    );
    const confirmed = readPolicyCache(device.stateDir) as PolicyCache;
    assert.equal(confirmed.fetchedAt, first.fetchedAt, 'a 304 does not fetch the document again');
    assert.equal(confirmed.etag, first.etag);

    const v2 = {
      ...POLICY_V1,
      rules: [
        {
          id: 'memory-read-only',
          effect: 'deny',
          match: { server: 'memory', tool: 'create_*' },
          reason: 'Read only.',
        },
      ],
    };
    const saved = await adminCall('PUT', '/v1/admin/policy', {
      policy: v2,
      reason: 'Memory read-only',
      base_version: 1,
    });
    assert.equal(saved.body.data.version, 2);
    await until('the new version on the device', () => readPolicyCache(device.stateDir)?.version === 2);
    assert.notEqual(readPolicyCache(device.stateDir)?.etag, first.etag);
    assert.equal(loadDaemonStatus(device.stateDir)?.policy?.version, 2);

    const denied = await device.run(
      'claude-code',
      'PreToolUse',
      claudeCall('memory', 'create_entities', 'toolu_2').pre,
    );
    assert.equal(denied.stdout, claudeDeny('Read only.'));
    const read = claudeCall('memory', 'read_graph', 'toolu_3');
    const allowed = await device.run('claude-code', 'PreToolUse', read.pre);
    assert.equal(allowed.stdout, '');
    await device.run('claude-code', 'PostToolUse', read.post);
    const [event] = await storedFor('read_graph');
    assert.equal(event?.rule_applied, 'default@2');
    const denials = await storedFor('create_entities', 2);
    assert.equal(denials[1]?.rule_applied, 'memory-read-only@2');

    // The admin sees the version the device holds.
    const devices = await adminCall('GET', '/v1/admin/policy/devices');
    const row = (devices.body.data.devices as Json[]).find((d) => d.device_id === deviceId);
    assert.deepEqual([row?.version, row?.current], [2, true]);
  });

  test('no usable copy: fail open lets the call through (reported), fail closed denies it in the client’s answer', async () => {
    const events = (l: ReturnType<typeof laptop>) => {
      const all = spooledEvents<Json>(l.stateDir);
      for (const e of all) assert.ok(observabilityEvent.safeParse(e).success, JSON.stringify(e));
      return all;
    };
    // Never fetched, nothing configured: open.
    const fresh = laptop(['claude-code']);
    const call = claudeCall('memory', 'create_entities', 'toolu_nc_1');
    const open = await fresh.run('claude-code', 'PreToolUse', call.pre);
    assert.deepEqual([open.code, open.stdout], [0, ''], open.stderr);
    await fresh.run('claude-code', 'PostToolUse', call.post);
    const [openEvent] = events(fresh);
    assert.deepEqual(
      [openEvent?.result, (openEvent?.metadata as Json | undefined)?.policy],
      ['allowed', 'no_cache_open'],
    );

    // Never fetched, the MDM's setting says closed: denied, in Cursor's documented answer too.
    const managed = laptop(['claude-code', 'cursor']);
    managed.settings({ policy: { noCache: 'closed' } });
    const closed = await managed.run('claude-code', 'PreToolUse', call.pre);
    const reason = (JSON.parse(closed.stdout) as { hookSpecificOutput: Json }).hookSpecificOutput
      .permissionDecisionReason as string;
    assert.match(reason, /no usable copy of the MCP policy/);
    const cursor = await managed.run(
      'cursor',
      'beforeMCPExecution',
      fixture('cursor', 'before-mcp-execution.json'),
    );
    assert.equal((JSON.parse(cursor.stdout) as Json).permission, 'deny');
    const refused = events(managed);
    assert.deepEqual(
      refused.map((e) => [e.result, e.deny_code, e.rule_applied]),
      [
        ['denied', 'policy_unavailable', 'no_cache@0'],
        ['denied', 'policy_unavailable', 'no_cache@0'],
      ],
    );

    // A copy older than the policy's cache_max_age_s is no usable copy: its own no_cache (closed) applies.
    const stale = laptop(['claude-code']);
    const old = Date.now() - 2 * 3_600_000;
    savePolicyCache(stale.stateDir, {
      version: 4,
      etag: '"4-x"',
      fetchedAt: old,
      checkedAt: old,
      policy: {
        rules: [],
        default: { effect: 'allow', reason: 'r' },
        no_cache: 'closed',
        cache_max_age_s: 3600,
      },
    });
    const staleAnswer = await stale.run('claude-code', 'PreToolUse', call.pre);
    assert.match(staleAnswer.stdout, /"permissionDecision":"deny"/);
    assert.equal(events(stale)[0]?.rule_applied, 'no_cache@4');

    // A torn copy: the policy's no-cache mode, kept on its own, still applies.
    writeFileSync(join(stale.stateDir, 'policy', 'policy.json'), '{"version": 4, "etag": "');
    const torn = await stale.run(
      'claude-code',
      'PreToolUse',
      claudeCall('github', 'search_code', 'toolu_nc_2').pre,
    );
    assert.match(torn.stdout, /"permissionDecision":"deny"/);
  });
});
