// `hooks install --proxy` on a fixture home built from the vendors' documented configs (Claude Desktop's
// claude_desktop_config.json, VS Code's JSONC mcp.json): the entry runs the proxy, the scan still reports the server's
// own source identity and fingerprint, and the uninstall puts back the exact bytes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'jsonc-parser';
import { configFingerprint, loadFingerprintKey } from '#agent/discovery/fingerprint.ts';
import { scanTable } from '#agent/discovery/print.ts';
import { inventoryReport, scanMachine } from '#agent/discovery/scan.ts';
import { runHooksCommand } from '#agent/hooks/hooks-command.ts';
import { installProxies, uninstallProxies } from '#agent/proxy/install.ts';
import { fixtureHome } from '#test/support/agent-home.ts';
import { runNode } from '#test/support/child.ts';

function laptop() {
  const h = fixtureHome();
  const stateDir = mkdtempSync(join(tmpdir(), 'proxy-state-'));
  const env = { home: h.home, platform: 'linux' as const, env: {} };
  const desktop = join(h.home, '.config', 'Claude', 'claude_desktop_config.json');
  const vscode = join(h.home, '.config', 'Code', 'User', 'mcp.json');
  return {
    ...h,
    stateDir,
    env,
    desktop,
    vscode,
    done: () => {
      h.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

const entryOf = (file: string, ...path: string[]) => {
  let value: unknown = parse(readFileSync(file, 'utf8'));
  for (const key of path) value = (value as Record<string, unknown>)[key];
  return value as { command: string; args?: string[] };
};

test('Claude Desktop and VS Code servers wrapped and restored byte for byte', async () => {
  const h = laptop();
  try {
    const before = { desktop: readFileSync(h.desktop), vscode: readFileSync(h.vscode) };
    const scanBefore = await scanMachine({ ...h.env, projectDirs: [] });
    const outcomes = await installProxies({
      stateDir: h.stateDir,
      servers: ['filesystem', 'memory'],
      clients: ['claude-desktop', 'vscode'],
      env: h.env,
      entry: '/opt/acp/agent.cjs',
      node: '/usr/bin/node',
    });
    assert.deepEqual(
      outcomes.map((o) => [o.client, o.status]),
      [
        ['claude-desktop', 'installed'],
        ['vscode', 'installed'],
      ],
    );
    const fs = entryOf(h.desktop, 'mcpServers', 'filesystem');
    assert.equal(fs.command, '/usr/bin/node');
    assert.deepEqual(fs.args?.slice(0, 10), [
      '/opt/acp/agent.cjs',
      'mcp-proxy',
      '--client',
      'claude-desktop',
      '--server',
      'filesystem',
      '--state',
      h.stateDir,
      '--',
      'npx',
    ]);
    assert.deepEqual(fs.args?.slice(10), [
      '-y',
      '@modelcontextprotocol/server-filesystem',
      '/Users/S3CR3T-desktop-fs-user/Desktop',
      '/Users/S3CR3T-desktop-fs-user/Downloads',
    ]);
    // The JSONC file keeps its comments; the remote server next to it is untouched.
    const vsText = readFileSync(h.vscode, 'utf8');
    assert.match(vsText, /\/\/ Inputs are prompted once/);
    assert.equal(entryOf(h.vscode, 'servers', 'memory').command, '/usr/bin/node');
    assert.match(vsText, /"type": "http"/);

    // The scan sees through the proxy: the same source identity and fingerprint as before, now marked proxied.
    const scanAfter = await scanMachine({ ...h.env, projectDirs: [] });
    const key = loadFingerprintKey(h.stateDir);
    for (const [client, name] of [
      ['claude-desktop', 'filesystem'],
      ['vscode', 'memory'],
    ] as const) {
      const was = scanBefore.clients
        .find((c) => c.agentType === client)
        ?.servers.find((s) => s.name === name);
      const now = scanAfter.clients.find((c) => c.agentType === client)?.servers.find((s) => s.name === name);
      assert.ok(was && now);
      assert.deepEqual(now.source, was.source);
      assert.equal(now.proxied, true);
      assert.equal(configFingerprint(key, name, now.config), configFingerprint(key, name, was.config));
    }

    const lines = scanTable(scanAfter, h.home);
    assert.ok(
      lines.includes(
        "Claude Desktop: tool calls of filesystem are captured through mcp-proxy; its other servers' are not (agent hooks install --proxy NAME)",
      ),
      lines.join('\n'),
    );
    assert.ok(lines.some((l) => /filesystem .*through mcp-proxy/.test(l)));

    // Idempotent.
    const again = await installProxies({ stateDir: h.stateDir, servers: ['filesystem'], env: h.env });
    assert.deepEqual(
      again.map((o) => o.status),
      ['unchanged'],
    );

    const restored = uninstallProxies({ stateDir: h.stateDir, servers: [] });
    assert.deepEqual(
      restored.map((o) => [o.client, o.status]),
      [
        ['claude-desktop', 'restored'],
        ['vscode', 'restored'],
      ],
    );
    assert.ok(readFileSync(h.desktop).equals(before.desktop));
    assert.ok(readFileSync(h.vscode).equals(before.vscode));
  } finally {
    h.done();
  }
});

test('an entry without args, and a file edited since the install, still come back exactly', async () => {
  const h = laptop();
  try {
    const file = join(h.home, '.codeium', 'windsurf', 'mcp_config.json');
    mkdirSync(join(h.home, '.codeium', 'windsurf'), { recursive: true });
    const original =
      '{\n  "mcpServers": {\n    "local": { "command": "my-server" },\n    "other": { "command": "x" }\n  },\n  "theme": "dark"\n}\n';
    writeFileSync(file, original);
    const [installed] = await installProxies({
      stateDir: h.stateDir,
      servers: ['local'],
      clients: ['windsurf'],
      env: h.env,
      entry: '/opt/acp/agent.cjs',
      node: '/usr/bin/node',
    });
    assert.equal(installed?.status, 'installed');
    assert.deepEqual(entryOf(file, 'mcpServers', 'local').args?.slice(-2), ['--', 'my-server']);
    // The user changes something else meanwhile.
    writeFileSync(file, readFileSync(file, 'utf8').replace('"dark"', '"light"'));
    const [restored] = uninstallProxies({ stateDir: h.stateDir, servers: ['local'] });
    assert.equal(restored?.status, 'restored');
    assert.equal(readFileSync(file, 'utf8'), original.replace('"dark"', '"light"'));
  } finally {
    h.done();
  }
});

test('hooks uninstall without --proxy unwraps every server; --client names a client without hooks', async () => {
  const h = laptop();
  try {
    const before = readFileSync(h.desktop);
    const lines: string[] = [];
    const options = {
      stateDir: h.stateDir,
      env: h.env,
      clients: ['claude-desktop'],
      hookEntry: '/opt/acp/agent.cjs',
    };
    assert.equal(
      await runHooksCommand('install', { ...options, proxy: ['filesystem'] }, (l) => lines.push(l)),
      0,
    );
    assert.match(lines.join('\n'), /claude-desktop\s+installed/);
    assert.ok(!readFileSync(h.desktop).equals(before));
    assert.equal(await runHooksCommand('uninstall', options, (l) => lines.push(l)), 0);
    assert.ok(readFileSync(h.desktop).equals(before));
  } finally {
    h.done();
  }
});

test('wrapped servers send no secret: the inventory of the fixture home holds none of its planted markers', async () => {
  const h = laptop();
  try {
    await installProxies({
      stateDir: h.stateDir,
      servers: ['filesystem', 'memory'],
      env: h.env,
      entry: '/opt/acp/agent.cjs',
      node: '/usr/bin/node',
    });
    const scan = await scanMachine({ ...h.env, projectDirs: [] });
    const proxied = scan.clients.flatMap((c) => c.servers.filter((s) => s.proxied));
    assert.ok(proxied.length >= 2, 'the fixture has wrapped servers');
    const wire = JSON.stringify(inventoryReport(scan, loadFingerprintKey(h.stateDir)));
    assert.ok(h.secrets.length > 10);
    for (const secret of h.secrets) assert.ok(!wire.includes(secret), `${secret} on the wire`);
    assert.ok(!wire.includes(h.stateDir) && !wire.includes('mcp-proxy'));
  } finally {
    h.done();
  }
});

test('a server that cannot start: the proxy says which server, never its command or arguments', async () => {
  const h = laptop();
  try {
    const entry = fileURLToPath(new URL('../../../../agent/proxy/entry.ts', import.meta.url));
    const secret = 'S3CR3T-proxy-arg';
    const run = await runNode(
      [
        entry,
        'mcp-proxy',
        '--client',
        'zed',
        '--server',
        'db',
        '--state',
        h.stateDir,
        '--',
        `/nonexistent/${secret}`,
        secret,
      ],
      { cwd: h.home, env: { PATH: process.env.PATH ?? '' } },
    );
    assert.equal(run.code, 1);
    assert.match(run.stderr, /the server db could not be started \(ENOENT\)/);
    assert.ok(!run.stderr.includes(secret));
    const log = readFileSync(join(h.stateDir, 'logs', 'hook-errors.log'), 'utf8');
    assert.match(log, /db could not be started/);
    assert.ok(!log.includes(secret));
  } finally {
    h.done();
  }
});
