// The endpoint agent's discovery, end to end:
// - the secrets test: `agent inventory` runs as a child process on the fixture home, whose every secret-bearing
//   field holds a distinct marker, against a local server that records the raw request bytes; no marker may be in
//   them (the bytes, not a parsed object);
// - the agent registers and reports that scan to the service (each driver), and the admin API shows the MCP servers
//   with their scopes, source identities and fingerprints, the agent's version, and the fleet list tells the
//   official `github` server from the other images and hosts that share its name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DeviceClient } from '#agent/client.ts';
import { loadFingerprintKey } from '#agent/discovery/fingerprint.ts';
import { inventoryReport, scanMachine } from '#agent/discovery/scan.ts';
import type { DiscoveredServer } from '#agent/discovery/types.ts';
import { createDeviceIdentity, loadState, saveState } from '#agent/identity.ts';
import { AGENT_VERSION } from '#agent/version.ts';
import { type FixtureHome, fixtureHome } from '#test/support/agent-home.ts';
import { runNode } from '#test/support/child.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const CLI = fileURLToPath(new URL('../../../agent/cli.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The agent CLI as a laptop runs it: its own process, HOME the fixture home, nothing else of ours in the env. */
const agentCli = (fx: FixtureHome, state: string, args: string[]) =>
  runNode([CLI, ...args, '--state', state], {
    cwd: ROOT,
    env: { HOME: fx.home, PATH: process.env.PATH ?? '', TZ: 'UTC' },
  });

/** A TCP server that answers every HTTP request 200 with `answer` and keeps every byte it was sent. */
async function recordingServer(answer: object) {
  const received: Buffer[] = [];
  const server = createServer((socket: Socket) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, end).toString())?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const body = JSON.stringify(answer);
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      buffered = Buffer.alloc(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    bytes: () => Buffer.concat(received),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The markers each secret-bearing field of an entry holds: the test is only as good as its planting. */
function assertPlanted(server: DiscoveredServer) {
  const where = `${server.file} ${server.name}`;
  const marked = (value: unknown) => typeof value === 'string' && value.includes('S3CR3T-');
  const leaves = (value: unknown): unknown[] =>
    value === undefined
      ? []
      : value && typeof value === 'object'
        ? Object.values(value).flatMap(leaves)
        : [value];
  for (const key of ['env', 'headers', 'http_headers', 'settings']) {
    for (const leaf of leaves(server.config[key]))
      assert.ok(marked(leaf), `${where}: ${key} holds ${String(leaf)}`);
  }
  if (server.url) {
    const url = new URL(server.url);
    assert.ok(marked(url.pathname), `${where}: URL path`);
    assert.ok(marked(url.search) || url.search === '', `${where}: URL query`);
  }
  if (server.args?.length) assert.ok(server.args.some(marked), `${where}: args`);
  if (server.command?.includes('/') && !server.command.startsWith('/usr/local/bin/')) {
    assert.ok(marked(server.command), `${where}: command path`);
  }
}

describe('secrets never reach the wire', () => {
  let fx: FixtureHome;
  let dir: string;
  before(() => {
    fx = fixtureHome();
    dir = mkdtempSync(join(tmpdir(), 'agent-secrets-'));
  });
  after(() => {
    fx.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the fixtures plant a distinct marker in every secret-bearing field of every server', async () => {
    const scan = await scanMachine({ home: fx.home, platform: 'linux', env: {}, systemRoot: fx.root });
    const servers = scan.clients.flatMap((c) => c.servers);
    assert.ok(servers.length >= 35, `${servers.length} servers`);
    for (const server of servers) assertPlanted(server);
    assert.ok(fx.secrets.length >= 70, `${fx.secrets.length} markers`);
  });

  test('`agent inventory` (a child process) and the daemon path send none of them', async () => {
    const accepted = {
      success: true,
      deviceId: '00000000-0000-4000-8000-000000000000',
      agentsIn: 8,
      mcpsIn: 40,
      receivedAt: new Date().toISOString(),
    };
    const wire = await recordingServer(accepted);
    try {
      const state = join(dir, 'state');
      const identity = await createDeviceIdentity('p256');
      saveState(state, { identity, deviceId: accepted.deviceId, baseUrl: wire.url });
      const run = await agentCli(fx, state, ['inventory', '--url', wire.url]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Inventory accepted/);
      // The system-wide files (managed-mcp.json, Gemini's system settings) through what the daemon calls.
      const scan = await scanMachine({ home: fx.home, platform: 'linux', env: {}, systemRoot: fx.root });
      await new DeviceClient({ baseUrl: wire.url, identity }).reportInventory(
        ...((r) => [r.agents, r.agentVersion] as const)(inventoryReport(scan, loadFingerprintKey(state))),
      );
      const bytes = wire.bytes();
      const text = bytes.toString('latin1');
      // The request really carried the inventory: names, sources and fingerprints are there.
      for (const expected of [
        '"company-internal"',
        'ghcr.io/github/github-mcp-server',
        '"fingerprint":"',
        `"agentVersion":"${AGENT_VERSION}"`,
      ]) {
        assert.ok(text.includes(expected), `${expected} sent`);
      }
      const leaked = fx.secrets.filter((secret) => bytes.includes(Buffer.from(secret)));
      assert.deepEqual(leaked, []);
      // Nor anything that identifies the user's directories.
      assert.equal(bytes.includes(Buffer.from(fx.home)), false, 'the home path');
    } finally {
      await wire.close();
    }
  });
});

for (const driver of driversUnderTest()) {
  describe(`the agent reports its scan; the admin API shows it (${driver})`, () => {
    let svc: TestService;
    let fx: FixtureHome;
    let state: string;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      fx = fixtureHome();
      state = mkdtempSync(join(tmpdir(), 'agent-state-'));
    });
    after(async () => {
      await svc.dispose();
      fx.dispose();
      rmSync(state, { recursive: true, force: true });
    });

    test('register, inventory, then the device detail and the fleet MCP list', async () => {
      const token = await svc.adminToken();
      const register = await agentCli(fx, state, ['register', '--url', svc.url, '--token', token]);
      assert.equal(register.code, 0, register.stderr);
      const inventory = await agentCli(fx, state, ['inventory', '--url', svc.url]);
      assert.equal(inventory.code, 0, inventory.stderr);
      const { deviceId } = loadState(state);

      const detail = await svc.call('GET', `/v1/admin/devices/${deviceId}`, { token });
      assert.equal(detail.status, 200);
      const data = detail.body.data as {
        device: { agent_version: string | null };
        agents: Array<{ agent_type: string; capture: string | null }>;
        mcps: Array<{
          agent_type: string;
          name: string;
          scope: string;
          enabled: boolean;
          source: object;
          fingerprint: string;
        }>;
      };
      assert.equal(data.device.agent_version, AGENT_VERSION);
      assert.equal(data.agents.find((a) => a.agent_type === 'claude-code')?.capture, 'hooks');
      const mcp = (agent: string, name: string, scope: string) =>
        data.mcps.find((m) => m.agent_type === agent && m.name === name && m.scope === scope);
      // The same name in two scopes is two rows, each with its own source and fingerprint.
      assert.deepEqual(mcp('claude-code', 'github', 'user')?.source, {
        type: 'remote',
        name: 'https://api.githubcopilot.com',
      });
      assert.deepEqual(mcp('claude-code', 'github', 'local')?.source, {
        type: 'oci',
        name: 'ghcr.io/github/github-mcp-server',
        version: 'v0.9.1',
      });
      assert.notEqual(
        mcp('claude-code', 'github', 'user')?.fingerprint,
        mcp('claude-code', 'github', 'local')?.fingerprint,
      );
      assert.match(mcp('claude-code', 'github', 'local')?.fingerprint ?? '', /^[0-9a-f]{64}$/);
      assert.equal(mcp('claude-code', 'legacy-db', 'project')?.enabled, false);
      assert.deepEqual(mcp('codex', 'context7', 'project')?.source, {
        type: 'npm',
        name: '@upstash/context7-mcp',
        version: '1.0.14',
      });
      const local = await scanMachine({ home: fx.home, platform: 'linux', env: {}, systemRoot: state });
      const sent = inventoryReport(local, loadFingerprintKey(state)).agents.flatMap((a) => a.mcps ?? []);
      assert.equal(data.mcps.length, sent.length);

      const fleet = await svc.call('GET', '/v1/admin/mcps?limit=100', { token });
      assert.equal(fleet.status, 200);
      const github = (
        fleet.body.data as { mcps: Array<{ name: string; sources: object[]; sources_truncated: boolean }> }
      ).mcps.find((m) => m.name === 'github');
      assert.deepEqual(github?.sources, [
        { type: 'oci', name: 'ghcr.io/github/github-mcp-server' },
        { type: 'oci', name: 'ghcr.io/github/github-mcp-server', version: 'v0.9.1' },
        { type: 'remote', name: 'https://api.githubcopilot.com' },
      ]);
      assert.equal(github?.sources_truncated, false);
    });

    test('two scopes are two rows; a changed config replaces its row; the change feed stays per name', async () => {
      const token = await svc.adminToken();
      const identity = await createDeviceIdentity('ed25519');
      const client = new DeviceClient({ baseUrl: svc.url, identity });
      const { body: registered } = await client.register(token, {
        serialNumber: `SN-${Date.now()}`,
        brand: 'Acme',
        model: 'Book',
      });
      const fp = (c: string) => c.repeat(64);
      const github = (scope: string, fingerprint: string, source: object) => ({
        name: 'github',
        enabled: true,
        transport: 'stdio' as const,
        scope,
        fingerprint,
        source: source as { type: 'npm'; name: string },
      });
      const official = { type: 'npm', name: '@modelcontextprotocol/server-github', version: '2025.4.8' };
      const fork = { type: 'npm', name: '@someone/server-github' };
      const report = (mcps: ReturnType<typeof github>[]) =>
        client.reportInventory([{ agentType: 'claude-code', displayName: 'Claude Code', mcps }], '9.9.9');
      await report([github('user', fp('a'), official), github('project', fp('b'), fork)]);
      await report([github('user', fp('c'), official)]);
      const detail = await svc.call('GET', `/v1/admin/devices/${registered.deviceId}`, { token });
      const mcps = (detail.body.data as { mcps: Array<{ scope: string; fingerprint: string }> }).mcps;
      assert.deepEqual(
        mcps.map((m) => [m.scope, m.fingerprint]),
        [['user', fp('c')]],
      );
      await report([]);
      const changes = await svc.call(
        'GET',
        `/v1/admin/fleet/changes?device_id=${registered.deviceId}&mcp=github`,
        { token },
      );
      assert.deepEqual(
        (changes.body.data as { changes: Array<{ kind: string }> }).changes.map((c) => c.kind),
        ['mcp_disappeared', 'mcp_appeared'],
      );
      // The same name, scope and fingerprint twice is refused, naming the list; so is a fingerprint that is not one.
      const twice = await report([github('user', fp('a'), official), github('user', fp('a'), fork)]).catch(
        (e) => e,
      );
      assert.match(String(twice), /400 .*agents\[0\]\.mcps.*same MCP name twice/);
      const bad = await report([github('user', 'ABC', official)]).catch((e) => e);
      assert.match(String(bad), /400 .*agents\[0\]\.mcps\[0\]\.fingerprint/);
    });

    test('an older agent (no scope, source, fingerprint or version) is still accepted, and replaces the rows', async () => {
      const token = await svc.adminToken();
      const identity = loadState(state).identity;
      assert.ok(identity);
      const client = new DeviceClient({ baseUrl: svc.url, identity });
      await client.reportInventory([
        {
          agentType: 'claude-code',
          displayName: 'Claude Code',
          mcps: [{ name: 'github', enabled: true, transport: 'http' }],
        },
      ]);
      const detail = await svc.call('GET', `/v1/admin/devices/${loadState(state).deviceId}`, { token });
      const data = detail.body.data as { device: { agent_version: string | null }; mcps: object[] };
      assert.equal(data.device.agent_version, null);
      assert.deepEqual(
        data.mcps.map((m) => {
          const { first_seen_at: _f, last_seen_at: _l, ...rest } = m as Record<string, unknown>;
          return rest;
        }),
        [
          {
            agent_type: 'claude-code',
            name: 'github',
            enabled: true,
            transport: 'http',
            scope: null,
            source: null,
            fingerprint: null,
          },
        ],
      );
    });
  });
}
