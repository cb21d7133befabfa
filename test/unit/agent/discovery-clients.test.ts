// Discovery per client, on the vendors' documented examples (test/fixtures/agent): where each client's files are on
// macOS, Linux and Windows; JSONC, unknown keys, servers switched off in each client's own way, the same name in two
// scopes and which one the client uses; and files that cannot be read or parsed, which are warnings, never a crash.
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLIENTS } from '#agent/clients/index.ts';
import { scanMachine } from '#agent/discovery/scan.ts';
import type { ClientScan, DiscoveredServer, ScanContext, ScanResult } from '#agent/discovery/types.ts';
import { AGENT_FIXTURES, type FixtureHome, fixtureHome } from '#test/support/agent-home.ts';

const client = (scan: ScanResult, agentType: string): ClientScan => {
  const found = scan.clients.find((c) => c.agentType === agentType);
  assert.ok(found, `${agentType} found`);
  return found;
};
const server = (c: ClientScan, name: string, scope: string): DiscoveredServer => {
  const found = c.servers.find((s) => s.name === name && s.scope === scope);
  assert.ok(found, `${c.agentType} ${scope} ${name}`);
  return found;
};
const summary = (c: ClientScan) =>
  c.servers.map((s) => `${s.scope}:${s.name}:${s.transport}:${s.enabled ? 'on' : 'off'}`).sort();

describe('discovery on the documented fixtures (Linux home)', () => {
  let fx: FixtureHome;
  let scan: ScanResult;
  let managed: ScanResult;
  const api = () => join(fx.home, 'src', 'api');
  const web = () => join(fx.home, 'src', 'web');
  before(async () => {
    fx = fixtureHome();
    const empty = mkdtempSync(join(tmpdir(), 'agent-root-'));
    scan = await scanMachine({ home: fx.home, platform: 'linux', env: {}, systemRoot: empty });
    managed = await scanMachine({ home: fx.home, platform: 'linux', env: {}, systemRoot: fx.root });
    rmSync(empty, { recursive: true });
  });
  after(() => fx.dispose());

  test('every client of agent/clients is found, with no warning', () => {
    assert.deepEqual(scan.clients.map((c) => c.agentType).sort(), CLIENTS.map((c) => c.agentType).sort());
    assert.deepEqual(scan.warnings, []);
  });

  test('projects: the ones Claude Code and Codex record are looked in', () => {
    const projects = new Set(scan.clients.flatMap((c) => c.servers.map((s) => s.project).filter(Boolean)));
    assert.deepEqual([...projects].sort(), [api(), web()].sort());
  });

  test('Claude Code: user, local (per project) and project scopes; precedence local > project > user', () => {
    const cc = client(scan, 'claude-code');
    assert.deepEqual(summary(cc), [
      'local:chrome-devtools:stdio:off',
      'local:github:stdio:on',
      'project:airtable:stdio:on',
      'project:legacy-db:stdio:off',
      'project:sentry:http:on',
      'user:airtable:stdio:on',
      'user:asana:sse:on',
      'user:github:http:on',
    ]);
    assert.equal(server(cc, 'chrome-devtools', 'local').disabledBy, 'disabledMcpServers');
    assert.equal(server(cc, 'legacy-db', 'project').disabledBy, 'disabledMcpjsonServers');
    // The same name in two scopes: both reported, the user one overridden where the project's applies.
    assert.deepEqual(server(cc, 'github', 'user').overriddenBy, [{ scope: 'local', project: api() }]);
    assert.deepEqual(server(cc, 'github', 'local').overriddenBy, []);
    assert.deepEqual(server(cc, 'airtable', 'user').overriddenBy, [{ scope: 'project', project: api() }]);
    assert.deepEqual(server(cc, 'github', 'local').source, {
      type: 'oci',
      name: 'ghcr.io/github/github-mcp-server',
      version: 'v0.9.1',
    });
    assert.deepEqual(server(cc, 'github', 'user').source, {
      type: 'remote',
      name: 'https://api.githubcopilot.com',
    });
    assert.deepEqual(server(cc, 'airtable', 'project').source, {
      type: 'npm',
      name: 'airtable-mcp-server',
      version: '1.4.0',
    });
    // An unknown key (futureOption) is kept in the entry, so it counts in the fingerprint, and breaks nothing.
    assert.deepEqual(server(cc, 'legacy-db', 'project').config.futureOption, { retries: 3 });
    assert.deepEqual(server(cc, 'legacy-db', 'project').source, { type: 'executable', name: 'db-mcp' });
  });

  test('Claude Code: managed-mcp.json takes exclusive control; its servers win every name', () => {
    const cc = client(managed, 'claude-code');
    const on = cc.servers.filter((s) => s.enabled).map((s) => `${s.scope}:${s.name}`);
    assert.deepEqual(on.sort(), ['managed:company-internal', 'managed:github']);
    assert.equal(server(cc, 'sentry', 'project').disabledBy, 'managed-mcp.json (exclusive control)');
    assert.ok(server(cc, 'github', 'user').overriddenBy.some((o) => o.scope === 'managed'));
    assert.ok(cc.files.includes(join(fx.root, 'etc', 'claude-code', 'managed-mcp.json')));
  });

  test('Claude Desktop', () => {
    const cd = client(scan, 'claude-desktop');
    assert.deepEqual(summary(cd), ['user:filesystem:stdio:on']);
    assert.deepEqual(server(cd, 'filesystem', 'user').source, {
      type: 'npm',
      name: '@modelcontextprotocol/server-filesystem',
    });
  });

  test('Cursor: user and project files (JSONC with trailing commas), project wins', () => {
    const cu = client(scan, 'cursor');
    assert.deepEqual(summary(cu), [
      'project:server-name:stdio:on',
      'user:server-name:stdio:on',
      'user:userjot:http:on',
    ]);
    assert.deepEqual(server(cu, 'server-name', 'user').overriddenBy, [{ scope: 'project', project: web() }]);
    assert.deepEqual(server(cu, 'server-name', 'project').source, {
      type: 'pypi',
      name: 'oracle-oci-api-mcp-server',
      version: '1.2.0',
    });
  });

  test('VS Code: user mcp.json (JSONC), settings.json `mcp.servers`, workspace .vscode/mcp.json', () => {
    const vs = client(scan, 'vscode');
    assert.deepEqual(summary(vs), [
      'user:fetch:stdio:on',
      'user:github:http:on',
      'user:memory:stdio:on',
      'workspace:memory:stdio:on',
      'workspace:perplexity:stdio:on',
    ]);
    assert.equal(server(vs, 'perplexity', 'workspace').source.type, 'oci');
    assert.match(server(vs, 'perplexity', 'workspace').source.version ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(server(vs, 'memory', 'user').overriddenBy, [{ scope: 'workspace', project: api() }]);
  });

  test('Windsurf: serverUrl, `disabled: true`', () => {
    const ws = client(scan, 'windsurf');
    assert.deepEqual(summary(ws), ['user:git:stdio:off', 'user:github:stdio:on', 'user:zapier:http:on']);
    assert.equal(server(ws, 'git', 'user').disabledBy, 'disabled: true');
    assert.deepEqual(server(ws, 'zapier', 'user').source, {
      type: 'remote',
      name: 'https://actions.zapier.com',
    });
  });

  test('Codex: [mcp_servers.<name>] in TOML, `enabled = false`, the trusted project', () => {
    const cx = client(scan, 'codex');
    assert.deepEqual(summary(cx), [
      'project:context7:stdio:on',
      'user:context7:stdio:on',
      'user:figma:http:on',
      'user:playwright:stdio:off',
    ]);
    assert.deepEqual(server(cx, 'context7', 'project').source, {
      type: 'npm',
      name: '@upstash/context7-mcp',
      version: '1.0.14',
    });
  });

  test('Gemini CLI: httpUrl is HTTP, url is SSE; mcp.excluded and `gemini mcp disable`; system settings', () => {
    const ge = client(managed, 'gemini-cli');
    assert.deepEqual(summary(ge), [
      'project:pythonTools:stdio:on',
      'system:corp-search:http:on',
      'user:experimental-server:stdio:off',
      'user:httpServer:http:on',
      'user:pythonTools:stdio:on',
      'user:sseServer:sse:off',
    ]);
    assert.equal(server(ge, 'experimental-server', 'user').disabledBy, 'mcp.excluded');
    assert.equal(server(ge, 'sseServer', 'user').disabledBy, 'mcp-server-enablement.json');
    assert.deepEqual(server(ge, 'pythonTools', 'project').source, {
      type: 'pypi',
      name: 'my-mcp-server',
      version: '0.3.1',
    });
    assert.deepEqual(server(ge, 'corp-search', 'system').source, {
      type: 'remote',
      name: 'https://search.corp.example:9443',
    });
  });

  test('Zed: context_servers (JSONC), the older `command: {path}` form, extension servers, `enabled: false`', () => {
    const zd = client(scan, 'zed');
    assert.deepEqual(summary(zd), [
      'project:your-mcp-server:stdio:on',
      'user:old-style:stdio:off',
      'user:postgres-context-server:stdio:on',
      'user:remote-mcp-server:http:on',
      'user:your-mcp-server:stdio:on',
    ]);
    assert.deepEqual(server(zd, 'old-style', 'user').source, { type: 'executable', name: 'mcp' });
    assert.deepEqual(server(zd, 'postgres-context-server', 'user').source, {
      type: 'executable',
      name: '(zed extension)',
    });
  });

  test('watchedPaths: every file the clients read, present or not', () => {
    for (const c of scan.clients) for (const f of c.files) assert.ok(scan.watchedPaths.includes(f), f);
    assert.ok(scan.watchedPaths.includes(join(web(), '.mcp.json')), 'a project file that does not exist yet');
  });
});

describe('where each client looks, per OS', () => {
  const files = (
    platform: NodeJS.Platform,
    home: string,
    env: Record<string, string> = {},
    projectDirs: string[] = [],
  ) => {
    const ctx: ScanContext = { home, platform, env, projectDirs };
    return Object.fromEntries(CLIENTS.map((c) => [c.agentType, c.files(ctx).map((f) => f.path)]));
  };

  test('macOS', () => {
    const f = files('darwin', '/Users/ana', {}, ['/Users/ana/src/app']);
    assert.ok(f['claude-code']?.includes('/Users/ana/.claude.json'));
    assert.ok(f['claude-code']?.includes('/Library/Application Support/ClaudeCode/managed-mcp.json'));
    assert.ok(f['claude-code']?.includes('/Users/ana/src/app/.mcp.json'));
    assert.deepEqual(f['claude-desktop'], [
      '/Users/ana/Library/Application Support/Claude/claude_desktop_config.json',
    ]);
    assert.ok(f.vscode?.includes('/Users/ana/Library/Application Support/Code/User/mcp.json'));
    assert.ok(f.vscode?.includes('/Users/ana/src/app/.vscode/mcp.json'));
    assert.ok(f.cursor?.includes('/Users/ana/.cursor/mcp.json'));
    assert.deepEqual(f.windsurf, ['/Users/ana/.codeium/windsurf/mcp_config.json']);
    assert.ok(f.codex?.includes('/Users/ana/.codex/config.toml'));
    assert.ok(f['gemini-cli']?.includes('/Library/Application Support/GeminiCli/settings.json'));
    assert.ok(f.zed?.includes('/Users/ana/.config/zed/settings.json'));
  });

  test('Linux, with XDG_CONFIG_HOME, CODEX_HOME and CLAUDE_CONFIG_DIR', () => {
    const f = files('linux', '/home/bo', {
      XDG_CONFIG_HOME: '/home/bo/.xdg',
      CODEX_HOME: '/srv/codex',
      CLAUDE_CONFIG_DIR: '/home/bo/.cc',
    });
    assert.ok(f['claude-code']?.includes('/home/bo/.cc/.claude.json'));
    assert.ok(f['claude-code']?.includes('/etc/claude-code/managed-mcp.json'));
    assert.deepEqual(f['claude-desktop'], ['/home/bo/.xdg/Claude/claude_desktop_config.json']);
    assert.ok(f.vscode?.includes('/home/bo/.xdg/Code/User/settings.json'));
    assert.ok(f.vscode?.includes('/home/bo/.xdg/Code - Insiders/User/mcp.json'));
    assert.deepEqual(f.codex, ['/srv/codex/config.toml']);
    assert.ok(f['gemini-cli']?.includes('/etc/gemini-cli/settings.json'));
    assert.deepEqual(f.zed, ['/home/bo/.xdg/zed/settings.json']);
  });

  test('Windows, with APPDATA and ProgramData as Windows spells them', () => {
    const f = files(
      'win32',
      'C:\\Users\\cy',
      {
        AppData: 'D:\\Roaming',
        PROGRAMDATA: 'C:\\ProgramData',
        GEMINI_CLI_SYSTEM_SETTINGS_PATH: 'C:\\corp\\gemini.json',
      },
      ['C:\\src\\app'],
    );
    assert.ok(f['claude-code']?.includes('C:\\Users\\cy\\.claude.json'));
    assert.ok(f['claude-code']?.includes('C:\\Program Files\\ClaudeCode\\managed-mcp.json'));
    assert.ok(f['claude-code']?.includes('C:\\ProgramData\\ClaudeCode\\managed-mcp.json'));
    assert.ok(f['claude-code']?.includes('C:\\src\\app\\.mcp.json'));
    assert.deepEqual(f['claude-desktop'], ['D:\\Roaming\\Claude\\claude_desktop_config.json']);
    assert.ok(f.vscode?.includes('D:\\Roaming\\Code\\User\\mcp.json'));
    assert.ok(f.cursor?.includes('C:\\Users\\cy\\.cursor\\mcp.json'));
    assert.deepEqual(f.windsurf, ['C:\\Users\\cy\\.codeium\\windsurf\\mcp_config.json']);
    assert.ok(f['gemini-cli']?.includes('C:\\corp\\gemini.json'));
    assert.ok(f.zed?.includes('D:\\Roaming\\Zed\\settings.json'));
  });
});

describe('files that cannot be read or parsed', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'agent-broken-'));
    mkdirSync(join(home, '.cursor'));
    copyFileSync(join(AGENT_FIXTURES, 'broken', 'mcp.json'), join(home, '.cursor', 'mcp.json'));
    mkdirSync(join(home, '.codex'));
    copyFileSync(join(AGENT_FIXTURES, 'broken', 'config.toml'), join(home, '.codex', 'config.toml'));
    // A directory where a file should be: unreadable even for root, which reads any file whatever its mode.
    mkdirSync(join(home, '.codeium', 'windsurf', 'mcp_config.json'), { recursive: true });
    mkdirSync(join(home, '.gemini'));
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      '{"mcpServers": {"ok": {"command": "uvx", "args": ["mcp-server-time"]}}}',
    );
    writeFileSync(join(home, '.claude.json'), '');
    chmodSync(join(home, '.claude.json'), 0o644);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  test('a warning names the file and the line; the other clients are still scanned', async () => {
    const scan = await scanMachine({ home, platform: 'linux', env: {}, systemRoot: home });
    const byFile = new Map(scan.warnings.map((w) => [w.file, w]));
    const json = byFile.get(join(home, '.cursor', 'mcp.json'));
    assert.equal(json?.line, 6);
    assert.match(json?.message ?? '', /not valid JSON/);
    const toml = byFile.get(join(home, '.codex', 'config.toml'));
    assert.equal(toml?.line, 4);
    assert.match(toml?.message ?? '', /not valid TOML/);
    assert.match(byFile.get(join(home, '.codeium', 'windsurf', 'mcp_config.json'))?.message ?? '', /EISDIR/);
    assert.equal(scan.warnings.length, 3);
    // The clients whose files failed are present (their files exist) with no server; the others are read.
    assert.deepEqual(
      scan.clients.map((c) => [c.agentType, c.servers.length]),
      [
        ['claude-code', 0],
        ['cursor', 0],
        ['windsurf', 0],
        ['codex', 0],
        ['gemini-cli', 1],
      ],
    );
  });
});

describe('a home with 200 projects', () => {
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'agent-many-'));
    const projects: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      const dir = join(home, 'src', `p${i}`);
      mkdirSync(join(dir, '.cursor'), { recursive: true });
      writeFileSync(
        join(dir, '.mcp.json'),
        JSON.stringify({
          mcpServers: {
            [`db${i % 7}`]: { command: 'npx', args: ['-y', `db-mcp-${i % 7}`, `--project=${i}`] },
          },
        }),
      );
      writeFileSync(
        join(dir, '.cursor', 'mcp.json'),
        JSON.stringify({ mcpServers: { search: { url: `https://search.example/${i}` } } }),
      );
      projects[dir] = { mcpServers: {} };
    }
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects }));
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  test('every project is looked in, well within a generous bound', async () => {
    const started = performance.now();
    const scan = await scanMachine({ home, platform: 'linux', env: {}, systemRoot: home });
    const elapsed = performance.now() - started;
    assert.equal(client(scan, 'claude-code').servers.length, 200);
    assert.equal(client(scan, 'cursor').servers.length, 200);
    // The real figure is in docs/benchmarks.md (npm run bench:agent); this bound only catches a scan gone wrong.
    assert.ok(elapsed < 20_000, `scanned in ${elapsed.toFixed(0)} ms`);
  });
});
