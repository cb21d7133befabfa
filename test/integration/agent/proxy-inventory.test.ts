// Proxy mode end to end on each driver: a Claude Desktop config (its documented `mcpServers` shape) on a fixture home
// gets the reference filesystem server from npm wrapped by `hooks install --proxy`; the real MCP SDK client runs the
// rewritten entry as Claude Desktop would, lists the tools and calls one; the agent's inventory then carries the
// tools' definition hashes (never their text), which the service keeps per device, server and tool, a changed
// definition adding a row next to the old one.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { sql } from 'drizzle-orm';
import { DeviceClient } from '#agent/client.ts';
import { loadFingerprintKey } from '#agent/discovery/fingerprint.ts';
import { inventoryReport, scanMachine } from '#agent/discovery/scan.ts';
import { createDeviceIdentity } from '#agent/identity.ts';
import { installProxies } from '#agent/proxy/install.ts';
import { proxiedToolSources, toolHashesPath } from '#agent/proxy/tool-hashes.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { spooledEvents } from '#test/support/hook-runner.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const ENTRY = fileURLToPath(new URL('../../../agent/proxy/entry.ts', import.meta.url));
const FILESYSTEM = fileURLToPath(
  import.meta.resolve('@modelcontextprotocol/server-filesystem/dist/index.js' as string),
);

for (const driver of driversUnderTest()) {
  describe(`proxy mode: tool hashes in the inventory (${driver})`, () => {
    let svc: TestService;
    let dir: string;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      dir = mkdtempSync(join(tmpdir(), 'proxy-inventory-'));
    });
    after(async () => {
      await svc.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    test('wrapped, called through the SDK, reported, stored by server and tool', async () => {
      const home = join(dir, 'home');
      const state = join(dir, 'state');
      const shared = join(dir, 'shared');
      mkdirSync(shared, { recursive: true });
      writeFileSync(join(shared, 'notes.txt'), 'hello from the proxy test\n');
      const config = join(home, '.config', 'Claude', 'claude_desktop_config.json');
      mkdirSync(join(home, '.config', 'Claude'), { recursive: true });
      writeFileSync(
        config,
        `${JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [FILESYSTEM, shared] } } }, null, 2)}\n`,
      );
      const env = { home, platform: 'linux' as const, env: {} };
      const [installed] = await installProxies({ stateDir: state, servers: ['files'], env, entry: ENTRY });
      assert.equal(installed?.status, 'installed');

      // Claude Desktop's part: run the entry as the config now says.
      const entry = (
        JSON.parse(readFileSync(config, 'utf8')) as {
          mcpServers: { files: { command: string; args: string[] } };
        }
      ).mcpServers.files;
      const client = new Client({ name: 'claude-desktop-stand-in', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({ command: entry.command, args: entry.args, stderr: 'ignore' }),
      );
      let toolNames: string[];
      try {
        toolNames = (await client.listTools()).tools.map((t) => t.name);
        const read = await client.callTool({
          name: 'read_text_file',
          arguments: { path: join(shared, 'notes.txt') },
        });
        assert.match(JSON.stringify(read.content), /hello from the proxy test/);
      } finally {
        await client.close();
      }
      const [event] = spooledEvents<Record<string, unknown>>(state);
      assert.equal(event?.tool, 'read_text_file');
      assert.equal(event?.agent_type, 'claude-desktop');
      assert.equal(event?.result, 'allowed');

      // The agent's inventory: the proxied server with its tools' hashes, and no path or text of them.
      const scan = await scanMachine({ ...env, projectDirs: [] });
      const sources = proxiedToolSources(state, scan);
      // The daemon watches the file the proxy wrote, and reports again when a tools/list changes it.
      assert.deepEqual(sources.paths, [toolHashesPath(state, 'claude-desktop', 'files')]);
      assert.ok(existsSync(sources.paths[0] as string));
      const body = inventoryReport(scan, loadFingerprintKey(state), sources.read);
      const files = body.agents
        .find((a) => a.agentType === 'claude-desktop')
        ?.mcps?.find((m) => m.name === 'files');
      assert.deepEqual(files?.tools?.map((t) => t.name).sort(), [...toolNames].sort());
      assert.ok(files?.tools?.every((t) => /^[0-9a-f]{64}$/.test(t.hash)));
      const wire = JSON.stringify(body);
      assert.ok(!wire.includes(shared), 'no directory of the server on the wire');
      assert.ok(!wire.includes('Read the complete contents'), 'no description text on the wire');

      const token = await svc.adminToken();
      const identity = await createDeviceIdentity('p256');
      const device = new DeviceClient({ baseUrl: svc.url, identity });
      const { body: registered } = await device.register(token, {
        serialNumber: `SN-proxy-${Date.now()}`,
        brand: 'Acme',
        model: 'Book',
      });
      await device.reportInventory(body.agents, body.agentVersion);
      const db = svc.runtime.database.db;
      const stored = () =>
        queryRows(
          db,
          sql`SELECT tool_name, definition_hash, source_type, count(*) OVER (PARTITION BY tool_name)::int AS n
              FROM inventory_mcp_tools
              WHERE device_id = ${registered.deviceId}::uuid AND agent_type = 'claude-desktop' AND mcp_name = 'files'
              ORDER BY tool_name, first_seen_at`,
        );
      const first = await stored();
      assert.deepEqual(
        first.map((r) => [r.tool_name, r.definition_hash]),
        [...(files?.tools ?? [])].sort((a, b) => a.name.localeCompare(b.name)).map((t) => [t.name, t.hash]),
      );
      assert.equal(first[0]?.source_type, 'executable');

      // The same tool with another definition (a rug pull): a second row, the first one kept.
      const changed = body.agents.map((a) => ({
        ...a,
        mcps: (a.mcps ?? []).map((m) =>
          m.name === 'files'
            ? {
                ...m,
                tools: (m.tools ?? []).map((t) =>
                  t.name === 'read_text_file' ? { ...t, hash: 'f'.repeat(64) } : t,
                ),
              }
            : m,
        ),
      }));
      await device.reportInventory(changed, body.agentVersion);
      const second = await stored();
      assert.deepEqual(
        second.filter((r) => r.tool_name === 'read_text_file').map((r) => r.definition_hash),
        [files?.tools?.find((t) => t.name === 'read_text_file')?.hash, 'f'.repeat(64)],
      );
      assert.equal(second.length, first.length + 1);

      // Bad input: a hash that is not SHA-256 hex is refused, naming the field, and nothing is stored.
      const bad = await device
        .reportInventory(
          [
            {
              agentType: 'zed',
              displayName: 'Zed',
              mcps: [{ name: 'x', enabled: true, transport: 'stdio', tools: [{ name: 't', hash: 'nope' }] }],
            },
          ],
          body.agentVersion,
        )
        .then(
          () => undefined,
          (err: Error & { status?: number; detail?: string }) => err,
        );
      assert.equal(bad?.status, 400);
      assert.match(`${bad?.message} ${bad?.detail ?? ''}`, /tools/);
    });
  });
}
