// `agent hooks install | uninstall` on fixture homes built from the clients' documented settings files, each with
// the user's own hooks: those are kept, install is idempotent and leaves a backup, uninstall restores the exact
// bytes (or, when the file changed since, removes only the agent's entries), and --managed writes the machine-wide
// files an MDM deploys.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'jsonc-parser';
import { ourHook } from '#agent/hooks/command-line.ts';
import { BACKUP_SUFFIX, type HookOutcome, installHooks, uninstallHooks } from '#agent/hooks/install.ts';
import type { HookEnv } from '#agent/hooks/types.ts';
import {
  HOOK_CLIENT_IDS,
  HOOK_FIXTURES,
  type HookClientId,
  fixtureHome as homeWith,
  USER_FILES,
} from '#test/support/hook-runner.ts';

type ClientId = HookClientId;
const CLIENTS = HOOK_CLIENT_IDS;
const fixtureHome = (clients?: readonly ClientId[]) => {
  const h = homeWith(clients);
  return { ...h, env: { ...h.env, platform: 'linux' as const } };
};

const read = (file: string) => readFileSync(file, 'utf8');
const statusOf = (outcomes: HookOutcome[]) => Object.fromEntries(outcomes.map((o) => [o.client, o.status]));

type Settings = { hooks?: Record<string, unknown[]> };

/** The commands of the agent in a settings file, as "event client" pairs. */
function agentEntries(file: string): string[] {
  const settings = parse(read(file)) as Settings;
  const found: string[] = [];
  for (const [event, entries] of Object.entries(settings.hooks ?? {}))
    for (const entry of entries)
      for (const handler of (entry as { hooks?: unknown[] }).hooks ?? [entry]) {
        const ours = ourHook((handler as { command?: unknown }).command);
        if (ours)
          found.push(`${ours.event} ${ours.client}${ours.event === event ? '' : ' (under another event)'}`);
      }
  return found.sort();
}

/** The user's own entries of a settings file, whatever the agent added. */
function userEntries(file: string): unknown {
  const settings = parse(read(file)) as Settings;
  return Object.fromEntries(
    Object.entries(settings.hooks ?? {})
      .map(([event, entries]): [string, unknown[]] => [
        event,
        entries.filter(
          (entry) =>
            !((entry as { hooks?: unknown[] }).hooks ?? [entry]).some((h) =>
              ourHook((h as { command?: unknown }).command),
            ),
        ),
      ])
      .filter(([, entries]) => entries.length > 0),
  );
}

const EXPECTED: Record<ClientId, string[]> = {
  'claude-code': ['PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionStart'],
  cursor: ['afterMCPExecution', 'beforeMCPExecution'],
  'gemini-cli': ['AfterTool', 'BeforeTool'],
  codex: ['PostToolUse', 'PreToolUse'],
  windsurf: ['post_mcp_tool_use', 'pre_mcp_tool_use'],
};

test('install merges into every client, keeps the user own hooks and leaves a backup; twice is once', () => {
  const h = fixtureHome();
  const originals = Object.fromEntries(CLIENTS.map((client) => [client, read(h.file(client))]));
  const first = installHooks({
    stateDir: h.stateDir,
    env: h.env,
    hookEntry: '/opt/acp agent/agent.cjs',
    node: '/usr/bin/node',
  });
  assert.deepEqual(statusOf(first), Object.fromEntries(CLIENTS.map((client) => [client, 'installed'])));
  for (const client of CLIENTS) {
    const file = h.file(client);
    assert.deepEqual(
      agentEntries(file),
      EXPECTED[client].map((event) => `${event} ${client}`),
      client,
    );
    assert.deepEqual(
      userEntries(file),
      userEntries(join(HOOK_FIXTURES, USER_FILES[client][1])),
      `${client}: user hooks`,
    );
    assert.equal(read(`${file}${BACKUP_SUFFIX}`), originals[client], `${client}: backup`);
  }
  // The rest of a file keeps its bytes: Gemini CLI's comment, Claude Code's other settings.
  assert.match(read(h.file('gemini-cli')), /\/\/ The user's own settings, with a comment/);
  assert.equal((parse(read(h.file('claude-code'))) as { model: string }).model, 'opus');
  assert.equal((parse(read(h.file('cursor'))) as { version: number }).version, 1);
  // The command carries everything: absolute node, agent and state directory, quoted for the shell.
  const claude = parse(read(h.file('claude-code'))) as {
    hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string; timeout: number }> }>>;
  };
  const pre = claude.hooks.PreToolUse?.at(-1);
  assert.equal(pre?.matcher, 'mcp__.*');
  assert.equal(
    pre?.hooks[0]?.command,
    `/usr/bin/node '/opt/acp agent/agent.cjs' hook --client claude-code --event PreToolUse --state ${h.stateDir}`,
  );
  const afterFirst = Object.fromEntries(CLIENTS.map((client) => [client, read(h.file(client))]));
  const second = installHooks({
    stateDir: h.stateDir,
    env: h.env,
    hookEntry: '/opt/acp agent/agent.cjs',
    node: '/usr/bin/node',
  });
  assert.deepEqual(statusOf(second), Object.fromEntries(CLIENTS.map((client) => [client, 'unchanged'])));
  for (const client of CLIENTS) {
    assert.equal(read(h.file(client)), afterFirst[client], `${client}: second install changed the file`);
    assert.equal(read(`${h.file(client)}${BACKUP_SUFFIX}`), originals[client]);
  }
});

test('uninstall restores the exact bytes, and removes its backups', () => {
  const h = fixtureHome();
  const originals = Object.fromEntries(CLIENTS.map((client) => [client, read(h.file(client))]));
  installHooks({ stateDir: h.stateDir, env: h.env });
  const outcomes = uninstallHooks({ stateDir: h.stateDir, env: h.env });
  assert.deepEqual(statusOf(outcomes), Object.fromEntries(CLIENTS.map((client) => [client, 'restored'])));
  for (const client of CLIENTS) {
    assert.equal(read(h.file(client)), originals[client], client);
    assert.ok(!existsSync(`${h.file(client)}${BACKUP_SUFFIX}`));
  }
  assert.deepEqual(statusOf(uninstallHooks({ stateDir: h.stateDir, env: h.env })).cursor, 'unchanged');
});

test('a file changed since the install: uninstall removes only the agent entries and keeps the change', () => {
  const h = fixtureHome(['claude-code']);
  installHooks({ stateDir: h.stateDir, env: h.env });
  const file = h.file('claude-code');
  const edited = read(file).replace('"model": "opus"', '"model": "sonnet"');
  writeFileSync(file, edited);
  const [outcome] = uninstallHooks({ stateDir: h.stateDir, env: h.env, clients: ['claude-code'] });
  assert.equal(outcome?.status, 'removed');
  assert.deepEqual(agentEntries(file), []);
  assert.deepEqual(userEntries(file), userEntries(join(HOOK_FIXTURES, 'claude-code/settings.json')));
  assert.equal((parse(read(file)) as { model: string }).model, 'sonnet');
  // Event arrays that only the agent filled are gone with its entries.
  assert.deepEqual(Object.keys((parse(read(file)) as Settings).hooks ?? {}).sort(), [
    'PostToolUse',
    'PreToolUse',
  ]);
});

test('a new agent path replaces the agent entries instead of adding more; uninstall still restores the original', () => {
  const h = fixtureHome(['cursor']);
  const original = read(h.file('cursor'));
  installHooks({ stateDir: h.stateDir, env: h.env, hookEntry: '/old/agent.cjs', clients: ['cursor'] });
  const [moved] = installHooks({
    stateDir: h.stateDir,
    env: h.env,
    hookEntry: '/new/agent.cjs',
    clients: ['cursor'],
  });
  assert.equal(moved?.status, 'installed');
  assert.deepEqual(agentEntries(h.file('cursor')), ['afterMCPExecution cursor', 'beforeMCPExecution cursor']);
  assert.ok(!read(h.file('cursor')).includes('/old/agent.cjs'));
  uninstallHooks({ stateDir: h.stateDir, env: h.env });
  assert.equal(read(h.file('cursor')), original);
});

test('only clients set up for the user are touched; a client asked for by name gets a new file, removed again', () => {
  const h = fixtureHome([]);
  mkdirSync(join(h.home, '.cursor'));
  const outcomes = installHooks({ stateDir: h.stateDir, env: h.env });
  assert.deepEqual(statusOf(outcomes), {
    'claude-code': 'not-found',
    cursor: 'installed',
    'gemini-cli': 'not-found',
    codex: 'not-found',
    windsurf: 'not-found',
  });
  assert.ok(!existsSync(join(h.home, '.claude')));
  assert.deepEqual((parse(read(h.file('cursor'))) as { version: number }).version, 1);
  const [codex] = installHooks({ stateDir: h.stateDir, env: h.env, clients: ['codex'] });
  assert.equal(codex?.status, 'installed');
  assert.match(codex?.message ?? '', /trust/);
  uninstallHooks({ stateDir: h.stateDir, env: h.env });
  assert.ok(!existsSync(h.file('cursor')));
  assert.ok(existsSync(join(h.home, '.cursor')), 'the directory was the user own');
  assert.ok(!existsSync(join(h.home, '.codex')), 'the directory the install created goes too');
  assert.equal(
    statusOf(installHooks({ stateDir: h.stateDir, env: h.env, clients: ['vscode'] })).vscode,
    'failed',
  );
});

test('a settings file that does not parse is named with its line and left alone', () => {
  const h = fixtureHome(['claude-code']);
  const broken = '{\n  "model": "opus",\n  "hooks": {\n    "PreToolUse": [\n  }\n}\n';
  writeFileSync(h.file('claude-code'), broken);
  const [outcome] = installHooks({ stateDir: h.stateDir, env: h.env, clients: ['claude-code'] });
  assert.equal(outcome?.status, 'failed');
  assert.match(outcome?.message ?? '', new RegExp(`^${h.file('claude-code')}:5:3: `));
  assert.equal(read(h.file('claude-code')), broken);
});

test('--managed writes the machine-wide files, with no state directory in the command, and removes them again', () => {
  const h = fixtureHome([]);
  for (const platform of ['linux', 'darwin', 'win32'] as const) {
    const root = mkdtempSync(join(tmpdir(), `managed-${platform}-`));
    const env: HookEnv = {
      home: h.home,
      platform,
      env: platform === 'win32' ? { ProgramData: 'C:\\ProgramData', ProgramFiles: 'C:\\Program Files' } : {},
    };
    const files = {
      linux: {
        'claude-code': 'etc/claude-code/managed-settings.d/50-acp-agent.json',
        cursor: 'etc/cursor/hooks.json',
        'gemini-cli': 'etc/gemini-cli/settings.json',
        windsurf: 'etc/windsurf/hooks.json',
      },
      darwin: {
        'claude-code': 'Library/Application Support/ClaudeCode/managed-settings.d/50-acp-agent.json',
        cursor: 'Library/Application Support/Cursor/hooks.json',
        'gemini-cli': 'Library/Application Support/GeminiCli/settings.json',
        windsurf: 'Library/Application Support/Windsurf/hooks.json',
      },
      win32: {
        'claude-code': 'Program Files/ClaudeCode/managed-settings.d/50-acp-agent.json',
        cursor: 'ProgramData/Cursor/hooks.json',
        'gemini-cli': 'ProgramData/gemini-cli/settings.json',
        windsurf: 'ProgramData/Windsurf/hooks.json',
      },
    }[platform];
    // IT already deploys a Cursor hooks file: the agent's entries join it.
    mkdirSync(dirname(join(root, files.cursor)), { recursive: true });
    cpSync(join(HOOK_FIXTURES, 'cursor/hooks.json'), join(root, files.cursor));
    const outcomes = installHooks({
      stateDir: h.stateDir,
      env,
      managed: true,
      root,
      node: '/usr/local/bin/node',
      hookEntry: '/usr/local/lib/acp-agent/agent.cjs',
    });
    assert.deepEqual(
      statusOf(outcomes),
      {
        'claude-code': 'installed',
        cursor: 'installed',
        'gemini-cli': 'installed',
        codex: 'skipped',
        windsurf: 'installed',
      },
      platform,
    );
    assert.match(outcomes.find((o) => o.client === 'codex')?.message ?? '', /requirements\.toml/);
    for (const [client, file] of Object.entries(files)) {
      const text = read(join(root, file));
      assert.deepEqual(
        agentEntries(join(root, file)),
        EXPECTED[client as ClientId].map((event) => `${event} ${client}`),
      );
      assert.ok(!text.includes('--state'), `${platform} ${client}: each user's own state directory`);
    }
    assert.deepEqual(
      userEntries(join(root, files.cursor)),
      userEntries(join(HOOK_FIXTURES, 'cursor/hooks.json')),
    );
    const removed = uninstallHooks({ stateDir: h.stateDir, env, managed: true, root });
    assert.deepEqual(statusOf(removed), {
      'claude-code': 'restored',
      cursor: 'restored',
      'gemini-cli': 'restored',
      codex: 'skipped',
      windsurf: 'restored',
    });
    assert.equal(read(join(root, files.cursor)), read(join(HOOK_FIXTURES, 'cursor/hooks.json')));
    assert.ok(!existsSync(join(root, files['claude-code'])));
    assert.ok(!existsSync(dirname(join(root, files.windsurf))), 'the directories the install created go too');
  }
});
