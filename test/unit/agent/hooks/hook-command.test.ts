// The hook command run exactly as a client runs it: installed into a fixture home, read back from the client's
// settings file, run through sh from another working directory with the documented payloads on stdin. What it
// spools must be the service's events (checked against the service's own schema), with server and tool split,
// durations from pairing, sessions; what it prints must be the client's documented "go on".
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorLogPath } from '#agent/hooks/error-log.ts';
import { installHooks } from '#agent/hooks/install.ts';
import { saveKnownServers } from '#agent/hooks/known-servers.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import {
  buildHookBundle,
  fixture,
  fixtureHome,
  type HookClientId,
  installedCommand,
  runHookCommand,
  spooledEvents,
} from '#test/support/hook-runner.ts';

const bundle = buildHookBundle();

type Event = Record<string, unknown> & { metadata: Record<string, unknown> };

function installed(clients: HookClientId[], hookEntry: string | null = bundle) {
  const h = fixtureHome(clients);
  const outcomes = installHooks({ stateDir: h.stateDir, env: h.env, ...(hookEntry ? { hookEntry } : {}) });
  for (const client of clients) assert.equal(outcomes.find((o) => o.client === client)?.status, 'installed');
  // The clients run hooks in the project the developer works in, never in the agent's directory.
  const cwd = mkdtempSync(join(tmpdir(), 'project-'));
  const env = { PATH: process.env.PATH, HOME: h.home };
  const run = (client: HookClientId, event: string, payload: string) =>
    runHookCommand(installedCommand(h.file(client), client, event), payload, { cwd, env });
  const events = () => {
    const all = spooledEvents<Event>(h.stateDir);
    for (const event of all) {
      const parsed = observabilityEvent.safeParse(event);
      assert.ok(parsed.success, `not an event the service takes: ${JSON.stringify(parsed.error?.issues)}`);
    }
    return all;
  };
  return { ...h, run, events };
}

/** Every file the agent wrote, as one string: what it keeps on disk. */
function everythingStored(stateDir: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(readFileSync(path, 'latin1'));
    }
  };
  if (existsSync(stateDir)) walk(stateDir);
  return out.join('\n');
}

test('Claude Code: a call paired on tool_use_id, with its duration, session and model, and nothing of its input', async () => {
  const h = installed(['claude-code']);
  const start = await h.run('claude-code', 'SessionStart', fixture('claude-code', 'session-start.json'));
  const pre = await h.run('claude-code', 'PreToolUse', fixture('claude-code', 'pre-tool-use.json'));
  assert.deepEqual([pre.code, pre.stdout, start.code], [0, '', 0], pre.stderr);
  await sleep(300);
  // A field no version documents yet is ignored, not an error.
  const post = JSON.stringify({
    ...JSON.parse(fixture('claude-code', 'post-tool-use.json')),
    future_field: { x: 1 },
  });
  const after = await h.run('claude-code', 'PostToolUse', post);
  assert.deepEqual([after.code, after.stdout, after.stderr], [0, '', '']);
  const [event, ...more] = h.events();
  assert.equal(more.length, 0);
  assert.equal(event?.agent_type, 'claude-code');
  assert.equal(event?.mcp_name, 'memory');
  assert.equal(event?.tool, 'create_entities');
  assert.equal(event?.event_type, 'result');
  assert.equal(event?.result, 'allowed');
  assert.equal(event?.session_id, 'abc123');
  assert.equal(event?.model, 'claude-sonnet-4-6');
  assert.equal(event?.metadata.paired, true);
  assert.ok((event?.duration_ms as number) >= 300, `duration ${event?.duration_ms}`);
  assert.ok(Date.parse(event?.event_time as string) <= Date.now() - 300);
  const stored = everythingStored(h.stateDir);
  assert.ok(!stored.includes('s3cr3t') && !stored.includes('deploy-notes'), 'tool input or output stored');
  assert.ok(!existsSync(errorLogPath(h.stateDir)), 'nothing went wrong');
});

test('Claude Code: a failed call is an error with a short message and the duration Claude Code measured', async () => {
  const h = installed(['claude-code']);
  await h.run('claude-code', 'PreToolUse', fixture('claude-code', 'pre-tool-use.json'));
  const long = { ...JSON.parse(fixture('claude-code', 'post-tool-use-failure.json')) };
  long.error = `${long.error}\n${'stack frame\n'.repeat(200)}`;
  const failed = await h.run('claude-code', 'PostToolUseFailure', JSON.stringify(long));
  assert.deepEqual([failed.code, failed.stdout], [0, '']);
  const [event] = h.events();
  assert.equal(event?.event_type, 'error');
  assert.equal(event?.result, 'error');
  assert.match(event?.error_message as string, /^MCP error -32603: entity deploy-notes already exists/);
  assert.ok(String(event?.error_message).length <= 500);
  assert.equal(event?.duration_ms, 4187);
});

test('a parallel pair: two starts at once, then the two ends crossed, each paired with its own start', async () => {
  const h = installed(['claude-code']);
  const pre = JSON.parse(fixture('claude-code', 'pre-tool-use.json'));
  const post = JSON.parse(fixture('claude-code', 'post-tool-use.json'));
  const call = (body: Record<string, unknown>, id: string, tool: string) =>
    JSON.stringify({ ...body, tool_use_id: id, tool_name: `mcp__memory__${tool}` });
  await Promise.all([
    h.run('claude-code', 'PreToolUse', call(pre, 'toolu_A', 'read_graph')),
    h.run('claude-code', 'PreToolUse', call(pre, 'toolu_B', 'search_nodes')),
  ]);
  await sleep(250);
  await h.run('claude-code', 'PostToolUse', call(post, 'toolu_B', 'search_nodes'));
  await sleep(500);
  await h.run('claude-code', 'PostToolUse', call(post, 'toolu_A', 'read_graph'));
  const events = h.events();
  const byTool = Object.fromEntries(events.map((e) => [e.tool as string, e]));
  assert.deepEqual(Object.keys(byTool).sort(), ['read_graph', 'search_nodes']);
  const a = byTool.read_graph as Event;
  const b = byTool.search_nodes as Event;
  assert.ok(a.metadata.paired && b.metadata.paired);
  assert.ok(
    (b.duration_ms as number) >= 250 && (a.duration_ms as number) >= 750,
    `${b.duration_ms} ${a.duration_ms}`,
  );
  assert.ok((a.duration_ms as number) > (b.duration_ms as number));
  assert.notEqual(a.event_id, b.event_id);
  assert.equal(readdirSync(join(h.stateDir, 'hooks', 'pending')).length, 0, 'both starts were taken');
});

test('a malformed payload: exit 0 with the client "go on", nothing spooled, an error logged without the payload', async () => {
  const h = installed(['claude-code', 'cursor']);
  const claude = await h.run('claude-code', 'PreToolUse', '{"tool_name": "mcp__x__y", "token": "s3cr3t"');
  const cursor = await h.run('cursor', 'beforeMCPExecution', 'not json at all s3cr3t');
  assert.deepEqual([claude.code, claude.stdout], [0, '']);
  assert.deepEqual([cursor.code, JSON.parse(cursor.stdout)], [0, { permission: 'allow' }]);
  assert.deepEqual(h.events(), []);
  const log = readFileSync(errorLogPath(h.stateDir), 'utf8');
  assert.match(log, /claude-code PreToolUse: the payload is not valid JSON/);
  assert.match(log, /cursor beforeMCPExecution: the payload is not valid JSON/);
  assert.ok(!log.includes('s3cr3t'));
});

test('Cursor: the run time it reports, the user and model it names, the server from its URL without the query', async () => {
  const h = installed(['cursor']);
  const before = await h.run('cursor', 'beforeMCPExecution', fixture('cursor', 'before-mcp-execution.json'));
  assert.deepEqual(JSON.parse(before.stdout), { permission: 'allow' });
  const after = await h.run('cursor', 'afterMCPExecution', fixture('cursor', 'after-mcp-execution.json'));
  assert.deepEqual([after.code, JSON.parse(after.stdout)], [0, {}]);
  const [event] = h.events();
  assert.equal(event?.agent_type, 'cursor');
  assert.equal(event?.mcp_name, 'api.githubcopilot.com');
  assert.equal(event?.tool, 'create_issue');
  assert.equal(event?.duration_ms, 1234);
  assert.equal(event?.session_id, '668320d2-2fd8-4888-b33c-2a466fec86e7');
  assert.equal(event?.actor_email, 'dev@example.com');
  assert.equal(event?.model, 'claude-sonnet-4-20250514');
  assert.equal(event?.metadata.paired, true);
  assert.ok(!everythingStored(h.stateDir).includes('s3cr3t'));
  // Newer Cursor builds name the server.
  const named = { ...JSON.parse(fixture('cursor', 'after-mcp-execution.json')), mcp_server_name: 'github' };
  await h.run('cursor', 'afterMCPExecution', JSON.stringify(named));
  assert.equal(h.events()[1]?.mcp_name, 'github');
});

test('Gemini CLI: server and tool from mcp_context, and the error its AfterTool reports', async () => {
  const h = installed(['gemini-cli']);
  const before = await h.run('gemini-cli', 'BeforeTool', fixture('gemini-cli', 'before-tool.json'));
  const after = await h.run('gemini-cli', 'AfterTool', fixture('gemini-cli', 'after-tool-error.json'));
  assert.deepEqual([before.stdout, after.stdout, after.code], ['{}', '{}', 0]);
  const [event] = h.events();
  assert.deepEqual([event?.mcp_name, event?.tool, event?.result], ['github', 'search_repositories', 'error']);
  assert.equal(event?.error_message, 'GitHub API rate limit exceeded for the token');
  assert.equal(event?.metadata.paired, true);
});

test('Codex: the model its payloads carry, and an MCP result with isError as an error', async () => {
  const h = installed(['codex']);
  await h.run('codex', 'PreToolUse', fixture('codex', 'pre-tool-use.json'));
  const after = await h.run('codex', 'PostToolUse', fixture('codex', 'post-tool-use-error.json'));
  assert.deepEqual([after.code, after.stdout], [0, '']);
  const [event] = h.events();
  assert.deepEqual(
    [event?.mcp_name, event?.tool, event?.model, event?.session_id],
    ['fs', 'read', 'gpt-5-codex', 'thr_123'],
  );
  assert.equal(event?.error_message, 'ENOENT: no such file README.md');
});

test('Windsurf: server and tool from tool_info, paired on trajectory and turn', async () => {
  const h = installed(['windsurf']);
  const pre = await h.run('windsurf', 'pre_mcp_tool_use', fixture('windsurf', 'pre-mcp-tool-use.json'));
  const post = await h.run('windsurf', 'post_mcp_tool_use', fixture('windsurf', 'post-mcp-tool-use.json'));
  assert.deepEqual([pre.code, pre.stdout, post.code], [0, '', 0]);
  const [event] = h.events();
  assert.deepEqual([event?.mcp_name, event?.tool, event?.session_id], ['github', 'create_issue', 'traj-4']);
  assert.equal(event?.metadata.paired, true);
});

test('tool input and output are kept only when the device opts in, and then cut short', async () => {
  const h = installed(['claude-code']);
  writeFileSync(
    join(h.stateDir, 'config.json'),
    JSON.stringify({ capture: { toolInput: true, toolOutput: true, maxChars: 40 } }),
  );
  await h.run('claude-code', 'PreToolUse', fixture('claude-code', 'pre-tool-use.json'));
  await h.run('claude-code', 'PostToolUse', fixture('claude-code', 'post-tool-use.json'));
  const [event] = h.events();
  const input = event?.metadata.tool_input as string;
  assert.ok(input.startsWith('{"entities":[{"name":"deploy-notes"') && input.length === 40, input);
  assert.ok(String(event?.metadata.tool_output).length <= 40);
});

test('a server name holding the separator is found among the configured names', async () => {
  const h = installed(['claude-code']);
  const payload = (tool: string) =>
    JSON.stringify({ ...JSON.parse(fixture('claude-code', 'post-tool-use.json')), tool_name: tool });
  await h.run('claude-code', 'PostToolUse', payload('mcp__acme__tools__lookup_order'));
  saveKnownServers(h.stateDir, 'claude-code', ['acme__tools', 'github']);
  await h.run('claude-code', 'PostToolUse', payload('mcp__acme__tools__lookup_order'));
  const [unknown, known] = h.events();
  assert.deepEqual([unknown?.mcp_name, unknown?.tool], ['acme', 'tools__lookup_order']);
  assert.deepEqual([known?.mcp_name, known?.tool], ['acme__tools', 'lookup_order']);
});

test('installed from the sources, the command runs the hook entry with this Node.js', async () => {
  const h = installed(['claude-code'], null);
  assert.match(
    installedCommand(h.file('claude-code'), 'claude-code', 'PreToolUse'),
    /agent\/hooks\/entry\.ts hook /,
  );
  await h.run('claude-code', 'PreToolUse', fixture('claude-code', 'pre-tool-use.json'));
  await h.run('claude-code', 'PostToolUse', fixture('claude-code', 'post-tool-use.json'));
  assert.equal(h.events()[0]?.tool, 'create_entities');
});
