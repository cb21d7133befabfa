// The hook's inside, called directly: the decision point answered in each client's documented format, calls whose
// end never comes, what is not an MCP call, and failures of the hook itself, which never reach the tool call.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorLogPath } from '#agent/hooks/error-log.ts';
import { handleHook } from '#agent/hooks/handle.ts';
import { DOUBLE_UNDERSCORE, SINGLE_UNDERSCORE, splitToolName } from '#agent/hooks/tool-name.ts';
import type { Decision } from '#agent/hooks/types.ts';
import { Spool } from '#agent/spool/spool.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { fixture, spooledEvents } from '#test/support/hook-runner.ts';

const stateDir = () => mkdtempSync(join(tmpdir(), 'hook-state-'));
const deny: Decision = {
  kind: 'deny',
  code: 'tool_blocked',
  reason: 'Writes to production are blocked',
  rule: 'prod.readonly',
};
type Event = Record<string, unknown> & { metadata: Record<string, unknown> };

const PRE = {
  'claude-code': ['PreToolUse', fixture('claude-code', 'pre-tool-use.json')],
  codex: ['PreToolUse', fixture('codex', 'pre-tool-use.json')],
  cursor: ['beforeMCPExecution', fixture('cursor', 'before-mcp-execution.json')],
  'gemini-cli': ['BeforeTool', fixture('gemini-cli', 'before-tool.json')],
  windsurf: ['pre_mcp_tool_use', fixture('windsurf', 'pre-mcp-tool-use.json')],
} as const;

test('a deny from the decision point is answered in each client documented format and recorded as denied', () => {
  const answers = Object.fromEntries(
    Object.entries(PRE).map(([client, [event, stdin]]) => {
      const dir = stateDir();
      const answer = handleHook({ clientId: client, event, stateDir: dir, stdin }, { decide: () => deny });
      const [recorded, ...more] = spooledEvents<Event>(dir);
      assert.equal(more.length, 0);
      assert.ok(observabilityEvent.safeParse(recorded).success);
      assert.deepEqual(
        [recorded?.result, recorded?.deny_code, recorded?.deny_reason, recorded?.rule_applied],
        ['denied', 'tool_blocked', 'Writes to production are blocked', 'prod.readonly'],
      );
      return [client, answer];
    }),
  );
  const claudeDeny = JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: deny.reason,
    },
  });
  assert.deepEqual(answers, {
    'claude-code': { stdout: claudeDeny, exitCode: 0 },
    codex: { stdout: claudeDeny, exitCode: 0 },
    cursor: {
      stdout: JSON.stringify({ permission: 'deny', user_message: deny.reason, agent_message: deny.reason }),
      exitCode: 0,
    },
    'gemini-cli': { stdout: JSON.stringify({ decision: 'deny', reason: deny.reason }), exitCode: 0 },
    windsurf: { stdout: '', stderr: deny.reason, exitCode: 2 },
  });
});

test('allow is each client documented "go on": silence where an explicit allow would skip the user prompt', () => {
  const answers = Object.fromEntries(
    Object.entries(PRE).map(([client, [event, stdin]]) => [
      client,
      handleHook({ clientId: client, event, stateDir: stateDir(), stdin }).stdout,
    ]),
  );
  assert.deepEqual(answers, {
    'claude-code': '',
    codex: '',
    cursor: '{"permission":"allow"}',
    'gemini-cli': '{}',
    windsurf: '',
  });
});

test('a call whose end never comes is reported as an invocation once its start is an hour old', () => {
  const dir = stateDir();
  const now = Date.now();
  const minutes = (n: number) => n * 60_000;
  const pre = (id: string) =>
    JSON.stringify({ ...JSON.parse(fixture('claude-code', 'pre-tool-use.json')), tool_use_id: id });
  handleHook({
    clientId: 'claude-code',
    event: 'PreToolUse',
    stateDir: dir,
    stdin: pre('old'),
    now: now - minutes(61),
  });
  handleHook({
    clientId: 'claude-code',
    event: 'PreToolUse',
    stateDir: dir,
    stdin: pre('recent'),
    now: now - minutes(59),
  });
  assert.deepEqual(spooledEvents(dir), []);
  handleHook({ clientId: 'claude-code', event: 'PreToolUse', stateDir: dir, stdin: pre('now'), now });
  const [abandoned, ...more] = spooledEvents<Event>(dir);
  assert.equal(more.length, 0);
  assert.ok(observabilityEvent.safeParse(abandoned).success);
  assert.deepEqual([abandoned?.event_type, abandoned?.result], ['invocation', 'allowed']);
  assert.equal(abandoned?.event_time, new Date(now - minutes(61)).toISOString());
  assert.equal(abandoned?.metadata.unfinished, true);
});

test('what is not an MCP call, or not a client the agent knows, records nothing', () => {
  const dir = stateDir();
  const bash = JSON.stringify({
    ...JSON.parse(fixture('claude-code', 'pre-tool-use.json')),
    tool_name: 'Bash',
  });
  assert.deepEqual(handleHook({ clientId: 'claude-code', event: 'PreToolUse', stateDir: dir, stdin: bash }), {
    stdout: '',
    exitCode: 0,
  });
  assert.deepEqual(handleHook({ clientId: 'zed', event: 'PreToolUse', stateDir: dir, stdin: bash }), {
    stdout: '',
    exitCode: 0,
  });
  assert.deepEqual(spooledEvents(dir), []);
  assert.match(readFileSync(errorLogPath(dir), 'utf8'), /hook --client zed: not a client the agent knows/);
});

test('the hook failing itself (state directory unusable) still answers "go on"', () => {
  const file = join(stateDir(), 'not-a-directory');
  writeFileSync(file, 'x');
  const answer = handleHook({
    clientId: 'cursor',
    event: 'beforeMCPExecution',
    stateDir: file,
    stdin: fixture('cursor', 'before-mcp-execution.json'),
  });
  assert.deepEqual(answer, { stdout: '{"permission":"allow"}', exitCode: 0 });
});

test('a bad setting is logged and its default used', () => {
  const dir = stateDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ capture: { toolInput: 'yes' } }));
  handleHook({
    clientId: 'codex',
    event: 'PostToolUse',
    stateDir: dir,
    stdin: fixture('codex', 'post-tool-use-error.json'),
  });
  const [event] = spooledEvents<Event>(dir);
  assert.equal(event?.metadata.tool_input, undefined);
  assert.match(
    readFileSync(errorLogPath(dir), 'utf8'),
    /config\.json: capture\.toolInput must be true or false/,
  );
});

test('tool names split at the first separator unless a configured server name matches more', () => {
  assert.deepEqual(splitToolName('mcp__github__create_issue', DOUBLE_UNDERSCORE), {
    server: 'github',
    tool: 'create_issue',
  });
  assert.deepEqual(splitToolName('mcp__my-srv__a__b', DOUBLE_UNDERSCORE), { server: 'my-srv', tool: 'a__b' });
  assert.deepEqual(splitToolName('mcp__my__srv__a__b', DOUBLE_UNDERSCORE, ['my', 'my__srv']), {
    server: 'my__srv',
    tool: 'a__b',
  });
  // Claude Code writes a server name's other characters as `_`.
  assert.deepEqual(splitToolName('mcp__acme_io__ping', DOUBLE_UNDERSCORE, ['acme.io']), {
    server: 'acme.io',
    tool: 'ping',
  });
  assert.deepEqual(splitToolName('mcp_github_search_code', SINGLE_UNDERSCORE), {
    server: 'github',
    tool: 'search_code',
  });
  assert.deepEqual(splitToolName('mcp_my_srv_search', SINGLE_UNDERSCORE, ['my_srv']), {
    server: 'my_srv',
    tool: 'search',
  });
  for (const name of ['Bash', 'mcp__github', 'mcp__github__', 'mcp____tool'])
    assert.equal(splitToolName(name, DOUBLE_UNDERSCORE), undefined, name);
});

test('the spool bound is the device setting spool.maxBytes', () => {
  const dir = stateDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ spool: { maxBytes: 64 * 1024 } }));
  const post = JSON.parse(fixture('codex', 'post-tool-use-error.json'));
  for (let i = 0; i < 600; i++)
    handleHook({
      clientId: 'codex',
      event: 'PostToolUse',
      stateDir: dir,
      stdin: JSON.stringify({ ...post, tool_use_id: `call-${i}` }),
    });
  const stats = new Spool(join(dir, 'spool')).stats();
  assert.ok(stats.bytes <= 64 * 1024 + 4 * 1024, `${stats.bytes} bytes`);
  assert.ok(stats.dropped > 0);
  assert.equal(stats.dropped + stats.pending, 600);
});
