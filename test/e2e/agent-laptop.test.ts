// The endpoint agent end to end, as a laptop runs it: the single file `npm run agent:build` makes, on a home with the
// vendors' documented configs (Claude Code and Cursor among them; HOME, XDG_CONFIG_HOME and APPDATA point into it),
// against the service as npm start runs it. The agent registers, installs its hooks and reports its scan; then the
// test plays the clients: it runs the hook commands exactly as the install wrote them into ~/.claude/settings.json
// and ~/.cursor/hooks.json, through a shell, with the documented payloads (a call that fails, two calls in
// parallel). The daemon (`agent run`, as the service definitions run it) sends what the hooks spooled, and the admin API shows the device, its agents,
// its servers with their sources, the calls with durations and sessions, and configured vs called. Then the service
// goes away while 10,000 calls go through the hook, comes back, and every one of them is stored once. Every response
// of the service, the agent's included, is checked against the OpenAPI document (stop() throws for a broken one).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { loadDaemonStatus } from '#agent/daemon/status.ts';
import { handleHook } from '#agent/hooks/handle.ts';
import { knownServers } from '#agent/hooks/known-servers.ts';
import { daemonCommand } from '#agent/service/definition.ts';
import type { LocalService } from '#local-server/service.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { createLogger, setLogLevel } from '#shared/core/logger.ts';
import { fixtureHome } from '#test/support/agent-home.ts';
import { runProcess } from '#test/support/child.ts';
import type { ContractRecorder } from '#test/support/contract.ts';
import { provisionDatabase } from '#test/support/databases.ts';
import { freePort } from '#test/support/free-port.ts';
import { buildAgentFile, fixture, installedCommand, runHookCommand } from '#test/support/hook-runner.ts';
import { startCheckedService, TEST_ADMIN, testConfig } from '#test/support/service.ts';
import { until } from '#test/support/until.ts';

const OFFLINE_EVENTS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Event {
  event_id: string;
  event_time: string;
  agent_type: string;
  mcp_name: string;
  tool: string;
  event_type: string;
  result: string;
  error_message: string | null;
  duration_ms: number;
  session_id: string | null;
  model: string | null;
  actor_email: string | null;
}

describe('a laptop with Claude Code and Cursor, end to end', () => {
  const work = mkdtempSync(join(tmpdir(), 'acp-laptop-'));
  const bundle = join(work, 'acp-agent.cjs');
  const laptop = fixtureHome();
  const { home } = laptop;
  const stateDir = join(home, '.acp-agent');
  // The laptop's environment: its home, and the config directories Linux and Windows clients follow.
  const env = {
    PATH: process.env.PATH ?? '',
    TZ: 'UTC',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    APPDATA: join(home, 'AppData', 'Roaming'),
  };
  let database: { dsn: string; cleanup(): Promise<void> };
  let port: number;
  let url: string;
  let service: LocalService | undefined;
  let contract: ContractRecorder;
  let admin: string;
  let deviceId: string;
  let daemon: ChildProcess | undefined;
  let daemonOutput = '';

  const startService = async () => {
    const config = testConfig({ port, dashboard_url: 'http://dashboard.test', db: { dsn: database.dsn } });
    ({ service, contract } = await startCheckedService({ config, log: createLogger({ test: true }) }));
  };
  /** The admin API, each answer checked against the contract here (the recorder's take throws for a broken one). */
  const get = async <T = Record<string, unknown>>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${admin}` } });
    const text = await res.text();
    contract.take(res.headers.get('apigw-requestid'));
    assert.equal(res.status, 200, `${path}: ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  };
  /** The agent's single file, run as the laptop's user runs it (no --state: its ~/.acp-agent). */
  const agent = (args: string[], extra: Record<string, string> = {}) =>
    runProcess(process.execPath, [bundle, ...args], { cwd: home, env: { ...env, ...extra } });
  const stored = async (where = sql`true`) => {
    const [row] = await queryRows(
      (service as LocalService).runtime.database.db,
      sql`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS distinct FROM observability_events
        WHERE device_id = ${deviceId}::uuid AND ${where}`,
    );
    return row as { n: number; distinct: number };
  };

  before(async () => {
    setLogLevel('warn');
    buildAgentFile(bundle);
    database = await provisionDatabase('pglite');
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    await startService();
    const login = await fetch(`${url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TEST_ADMIN),
    });
    contract.take(login.headers.get('apigw-requestid'));
    admin = ((await login.json()) as { data: { access_token: string } }).data.access_token;
  });
  after(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
    await service?.stop();
    await database?.cleanup();
    laptop.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  test('register (the user signed in), install the hooks, scan, report the inventory', async () => {
    const register = await agent(['register', '--url', url, '--email', TEST_ADMIN.email], {
      ACP_PASSWORD: TEST_ADMIN.password,
    });
    assert.equal(register.code, 0, register.stderr);
    deviceId = (/^Registered: device ([0-9a-f-]{36}) /m.exec(register.stdout)?.[1] ?? '') as string;
    assert.ok(deviceId, register.stdout);
    // The person who signed in is the actor of the calls whose payload names nobody (Claude Code's).
    assert.deepEqual(JSON.parse(readFileSync(join(stateDir, 'config.json'), 'utf8')), {
      actorEmail: TEST_ADMIN.email,
    });
    // Not with --token: in a silent rollout that is an enrollment account, not the laptop's user.
    const silent = join(work, 'silent-state');
    const enrolled = await agent(['register', '--state', silent, '--url', url, '--token', admin]);
    assert.equal(enrolled.code, 0, enrolled.stderr);
    assert.equal(existsSync(join(silent, 'config.json')), false);

    const install = await agent(['hooks', 'install']);
    assert.equal(install.code, 0, install.stderr);
    assert.match(
      install.stdout,
      new RegExp(`^claude-code +installed +${home}/\\.claude/settings\\.json`, 'm'),
    );
    assert.match(install.stdout, new RegExp(`^cursor +installed +${home}/\\.cursor/hooks\\.json`, 'm'));

    // A scan (which sends nothing) keeps each hooked client's server names for the hook.
    const scan = await agent(['scan']);
    assert.equal(scan.code, 0, scan.stderr);
    assert.deepEqual(knownServers(stateDir, 'cursor'), ['server-name', 'userjot']);
    assert.deepEqual(knownServers(stateDir, 'claude-code'), [
      'airtable',
      'asana',
      'chrome-devtools',
      'github',
      'legacy-db',
      'sentry',
    ]);

    const inventory = await agent(['inventory']);
    assert.equal(inventory.code, 0, inventory.stderr);
    assert.match(inventory.stdout, /^Inventory accepted: \d+ agents, \d+ MCP servers$/m);
  });

  test('the daemon, started as the service definitions start it, reports the inventory', async () => {
    const [node, ...args] = daemonCommand(process.execPath, bundle, stateDir);
    daemon = spawn(node as string, args, { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout?.on('data', (d) => (daemonOutput += d));
    daemon.stderr?.on('data', (d) => (daemonOutput += d));
    await until('the inventory at start', () => loadDaemonStatus(stateDir)?.inventory.sentAt, 60_000);
    assert.equal(daemon.exitCode, null, daemonOutput);
  });

  test('the device, its agents and its MCP servers with their source identities', async () => {
    const { devices } = await get<{ devices: Array<Record<string, unknown>> }>('/v1/admin/devices');
    const listed = devices.find((d) => d.id === deviceId);
    assert.ok(listed, 'the device is listed');
    assert.equal(listed.owner_email, TEST_ADMIN.email);
    assert.match(String(listed.agent_version), /^\d+\.\d+\.\d+/);

    const detail = await get<{
      agents: Array<{ agent_type: string; capture: string | null }>;
      mcps: Array<{
        agent_type: string;
        name: string;
        scope: string | null;
        transport: string;
        enabled: boolean;
        source: Record<string, string> | null;
        fingerprint: string | null;
      }>;
    }>(`/v1/admin/devices/${deviceId}`);
    const capture = Object.fromEntries(detail.agents.map((a) => [a.agent_type, a.capture]));
    assert.equal(capture['claude-code'], 'hooks');
    assert.equal(capture.cursor, 'hooks');
    assert.equal(capture['claude-desktop'], 'none', 'a client without hooks says so');
    const servers = (agentType: string) =>
      detail.mcps
        .filter((m) => m.agent_type === agentType)
        .map(({ name, scope, transport, enabled, source }) => ({ name, scope, transport, enabled, source }));
    // What the fixtures configure (test/fixtures/agent/home), as the vendors document these files.
    assert.deepEqual(
      new Set(servers('cursor').map((s) => JSON.stringify(s))),
      new Set(
        [
          {
            name: 'server-name',
            scope: 'project',
            transport: 'stdio',
            enabled: true,
            source: { type: 'pypi', name: 'oracle-oci-api-mcp-server', version: '1.2.0' },
          },
          {
            name: 'server-name',
            scope: 'user',
            transport: 'stdio',
            enabled: true,
            source: { type: 'npm', name: 'mcp-server' },
          },
          {
            name: 'userjot',
            scope: 'user',
            transport: 'http',
            enabled: true,
            source: { type: 'remote', name: 'https://api.userjot.com' },
          },
        ].map((s) => JSON.stringify(s)),
      ),
    );
    const claude = servers('claude-code');
    const find = (name: string, scope: string) => claude.find((s) => s.name === name && s.scope === scope);
    assert.deepEqual(find('github', 'user')?.source, {
      type: 'remote',
      name: 'https://api.githubcopilot.com',
    });
    assert.deepEqual(find('github', 'local')?.source, {
      type: 'oci',
      name: 'ghcr.io/github/github-mcp-server',
      version: 'v0.9.1',
    });
    assert.deepEqual(find('airtable', 'user')?.source, { type: 'npm', name: 'airtable-mcp-server' });
    assert.deepEqual(find('airtable', 'project')?.source, {
      type: 'npm',
      name: 'airtable-mcp-server',
      version: '1.4.0',
    });
    assert.equal(find('chrome-devtools', 'local')?.enabled, false, 'toggled off in /mcp');
    assert.equal(find('legacy-db', 'project')?.enabled, false, 'disabledMcpjsonServers');
    assert.deepEqual(find('legacy-db', 'project')?.source, { type: 'executable', name: 'db-mcp' });
    for (const m of detail.mcps) assert.match(String(m.fingerprint), /^[0-9a-f]{64}$/);
    const body = JSON.stringify(detail);
    for (const secret of laptop.secrets) assert.ok(!body.includes(secret), `${secret} reached the service`);
  });

  test('the clients call MCP tools through the installed hooks; the daemon sends the calls', async () => {
    const claudeSettings = join(home, '.claude', 'settings.json');
    const cursorHooks = join(home, '.cursor', 'hooks.json');
    const claude = (event: string) => installedCommand(claudeSettings, 'claude-code', event);
    const cursor = (event: string) => installedCommand(cursorHooks, 'cursor', event);
    // Claude Code runs its hooks in the project; Cursor in the workspace. Each gets the user's environment.
    const inProject = { cwd: join(home, 'src', 'api'), env: { PATH: env.PATH, HOME: home } };
    const inWorkspace = { cwd: join(home, 'src', 'web'), env: { PATH: env.PATH, HOME: home } };
    const run = async (command: string, payload: object, where = inProject) => {
      const done = await runHookCommand(command, JSON.stringify(payload), where);
      assert.equal(done.code, 0, `${command}: ${done.stderr}`);
      return done.stdout;
    };
    const documented = (client: string, file: string) => JSON.parse(fixture(client, file)) as object;
    const session = 'e2e-claude-session';
    const call = (file: string, toolName: string, id: string, over: object = {}) => ({
      ...documented('claude-code', file),
      session_id: session,
      cwd: inProject.cwd,
      tool_name: toolName,
      tool_use_id: id,
      ...over,
    });

    await run(claude('SessionStart'), {
      ...documented('claude-code', 'session-start.json'),
      session_id: session,
    });
    // A call that succeeds; Claude Code's PostToolUse of the documented example gives no run time: the pair does.
    assert.equal(
      await run(claude('PreToolUse'), call('pre-tool-use.json', 'mcp__github__create_issue', 'toolu_A')),
      '',
    );
    await sleep(300);
    await run(claude('PostToolUse'), call('post-tool-use.json', 'mcp__github__create_issue', 'toolu_A'));
    // A call that fails, with the run time Claude Code reports.
    await run(claude('PreToolUse'), call('pre-tool-use.json', 'mcp__airtable__create_record', 'toolu_B'));
    await run(
      claude('PostToolUseFailure'),
      call('post-tool-use-failure.json', 'mcp__airtable__create_record', 'toolu_B', { duration_ms: 842 }),
    );
    // Two calls in parallel: pre, pre, post, post, paired by their tool-use ids (the second one ends first).
    await Promise.all([
      run(claude('PreToolUse'), call('pre-tool-use.json', 'mcp__github__get_issue', 'toolu_C')),
      run(claude('PreToolUse'), call('pre-tool-use.json', 'mcp__sentry__list_issues', 'toolu_D')),
    ]);
    await sleep(200);
    await run(claude('PostToolUse'), call('post-tool-use.json', 'mcp__sentry__list_issues', 'toolu_D'));
    await sleep(300);
    await run(claude('PostToolUse'), call('post-tool-use.json', 'mcp__github__get_issue', 'toolu_C'));

    // Cursor, a newer build that names the server, and the documented (older) payload that gives only its URL.
    const conversation = 'e2e-cursor-conversation';
    const cursorCall = (file: string, over: object) => ({
      ...documented('cursor', file),
      conversation_id: conversation,
      workspace_roots: [inWorkspace.cwd],
      ...over,
    });
    const named = { mcp_server_name: 'userjot', tool_name: 'list_feedback', tool_input: '{"limit":5}' };
    assert.deepEqual(
      JSON.parse(
        await run(cursor('beforeMCPExecution'), cursorCall('before-mcp-execution.json', named), inWorkspace),
      ),
      { permission: 'allow' },
    );
    await run(
      cursor('afterMCPExecution'),
      cursorCall('after-mcp-execution.json', { ...named, duration: 611 }),
      inWorkspace,
    );
    await run(cursor('beforeMCPExecution'), cursorCall('before-mcp-execution.json', {}), inWorkspace);
    await run(
      cursor('afterMCPExecution'),
      cursorCall('after-mcp-execution.json', {
        result_json: '{"content":[{"type":"text","text":"rate limited"}],"isError":true}',
      }),
      inWorkspace,
    );
    assert.equal(existsSync(join(stateDir, 'logs', 'hook-errors.log')), false, 'no hook failed');

    const calls = await until(
      'the six calls stored',
      async () => {
        const { events } = await get<{ events: Event[] }>(
          `/v1/admin/observability/events?device_id=${deviceId}&limit=50`,
        );
        return events.length === 6 ? events : undefined;
      },
      60_000,
    );
    const byTool = Object.fromEntries(calls.map((e) => [`${e.mcp_name}/${e.tool}`, e]));
    const claudeFacts = { agent_type: 'claude-code', session_id: session, model: 'claude-sonnet-4-6' };
    const actor = { actor_email: TEST_ADMIN.email };
    assert.deepEqual(pick(byTool['github/create_issue']), {
      ...claudeFacts,
      ...actor,
      event_type: 'result',
      result: 'allowed',
      error_message: null,
    });
    assert.ok((byTool['github/create_issue']?.duration_ms ?? 0) >= 300, 'paired: pre to post');
    assert.deepEqual(pick(byTool['airtable/create_record']), {
      ...claudeFacts,
      ...actor,
      event_type: 'error',
      result: 'error',
      error_message: 'MCP error -32603: entity deploy-notes already exists',
    });
    assert.equal(byTool['airtable/create_record']?.duration_ms, 842, 'the run time Claude Code reported');
    const [c, d] = [byTool['github/get_issue'], byTool['sentry/list_issues']];
    assert.deepEqual([pick(c).result, pick(d).result], ['allowed', 'allowed']);
    assert.ok((c?.duration_ms ?? 0) >= 500 && (d?.duration_ms ?? 0) >= 200, JSON.stringify([c, d]));
    assert.ok((c?.duration_ms ?? 0) > (d?.duration_ms ?? 0), 'each post paired with its own pre');
    const cursorFacts = {
      agent_type: 'cursor',
      session_id: conversation,
      model: 'claude-sonnet-4-20250514',
      actor_email: 'dev@example.com',
    };
    assert.deepEqual(pick(byTool['userjot/list_feedback']), {
      ...cursorFacts,
      event_type: 'result',
      result: 'allowed',
      error_message: null,
    });
    assert.equal(byTool['userjot/list_feedback']?.duration_ms, 611);
    // The older payload names the server by its URL: the host is kept, never its path or query.
    assert.deepEqual(pick(byTool['api.githubcopilot.com/create_issue']), {
      ...cursorFacts,
      event_type: 'error',
      result: 'error',
      error_message: 'rate limited',
    });
    assert.equal(byTool['api.githubcopilot.com/create_issue']?.duration_ms, 1234);

    const sessionView = await get<{
      session: {
        calls: number;
        errors: number;
        duration_ms: number;
        agent_types: string[];
        models: string[];
      };
      events: Event[];
    }>(`/v1/admin/observability/sessions/${session}`);
    assert.equal(sessionView.session.calls, 4);
    assert.equal(sessionView.session.errors, 1);
    assert.deepEqual(sessionView.session.agent_types, ['claude-code']);
    assert.deepEqual(sessionView.session.models, ['claude-sonnet-4-6']);
    assert.equal(
      sessionView.session.duration_ms,
      ['github/create_issue', 'airtable/create_record', 'github/get_issue', 'sentry/list_issues']
        .map((k) => byTool[k]?.duration_ms ?? 0)
        .reduce((a, b) => a + b),
    );
    // Oldest first, by when each call started: the parallel pair in the order it began.
    assert.deepEqual(
      sessionView.events.map((e) => e.tool),
      ['create_issue', 'create_record', ...[c, d].sort((x, y) => cmp(x, y)).map((e) => e?.tool)],
    );
  });

  test('configured vs called, on the scan of this laptop', async () => {
    const report = await get<{
      mcps: Array<{ name: string; usage: string; calls: number; errors: number; sources: unknown[] }>;
      shadow: Array<{ name: string; calls: number; errors: number }>;
      configured_never_called: Array<{ name: string; devices: number }>;
    }>('/v1/admin/mcps?limit=100');
    const row = (name: string) => report.mcps.find((m) => m.name === name);
    assert.deepEqual(
      ['github', 'airtable', 'sentry', 'userjot'].map((n) => [
        n,
        row(n)?.usage,
        row(n)?.calls,
        row(n)?.errors,
      ]),
      [
        ['github', 'configured_and_called', 2, 0],
        ['airtable', 'configured_and_called', 1, 1],
        ['sentry', 'configured_and_called', 1, 0],
        ['userjot', 'configured_and_called', 1, 0],
      ],
    );
    // github is configured three ways on this laptop (Claude Code's remote server and a pinned container in one
    // project, Windsurf's unpinned container): the admin tells them apart by source.
    assert.deepEqual(row('github')?.sources, [
      { type: 'oci', name: 'ghcr.io/github/github-mcp-server' },
      { type: 'oci', name: 'ghcr.io/github/github-mcp-server', version: 'v0.9.1' },
      { type: 'remote', name: 'https://api.githubcopilot.com' },
    ]);
    assert.equal(row('asana')?.usage, 'configured_never_called');
    assert.ok(report.configured_never_called.some((m) => m.name === 'asana' && m.devices === 1));
    assert.ok(!report.configured_never_called.some((m) => m.name === 'github'));
    assert.deepEqual(report.shadow, [{ name: 'api.githubcopilot.com', calls: 1, denied: 0, errors: 1 }]);
  });

  test(`the service away: ${OFFLINE_EVENTS} calls go through the hook, and once it is back each is stored once`, async (t) => {
    const beforeOffline = (await stored()).n;
    await service?.stop();
    service = undefined;
    // The hook's own code, with the payloads Claude Code sends, a pre and a post per call: starting 20,000 processes
    // would take the test's whole budget on this machine (the calls above ran the installed command itself).
    const offline = 'e2e-offline-session';
    for (let i = 0; i < OFFLINE_EVENTS; i++) {
      for (const [event, file] of [
        ['PreToolUse', 'pre-tool-use.json'],
        [
          i % 10 === 0 ? 'PostToolUseFailure' : 'PostToolUse',
          i % 10 === 0 ? 'post-tool-use-failure.json' : 'post-tool-use.json',
        ],
      ] as const) {
        const answer = handleHook({
          clientId: 'claude-code',
          event,
          stateDir,
          stdin: JSON.stringify({
            ...(JSON.parse(fixture('claude-code', file)) as object),
            session_id: offline,
            tool_use_id: `toolu_offline_${i}`,
          }),
        });
        assert.equal(answer.exitCode, 0);
      }
    }
    assert.equal(existsSync(join(stateDir, 'logs', 'hook-errors.log')), false, 'no hook failed');
    // The daemon found the service away when the calls came, and keeps trying for a while.
    await until('the daemon retrying', () => loadDaemonStatus(stateDir)?.retrying, 30_000);
    await sleep(2000);
    await startService();
    // The daemon tries again when its backoff says (full jitter, growing with each failure while the service was
    // away): the bound is that moment, from its status file, plus time to send everything.
    const nextAttempt = Date.parse(loadDaemonStatus(stateDir)?.retrying?.nextAttemptAt ?? '') || Date.now();
    t.diagnostic(`the daemon's next attempt in ${Math.round((nextAttempt - Date.now()) / 1000)} s`);
    const offlineOnly = sql`session_id = ${offline}`;
    await until(
      `${OFFLINE_EVENTS} events stored`,
      async () => ((await stored(offlineOnly)).n >= OFFLINE_EVENTS ? true : undefined),
      Math.max(0, nextAttempt - Date.now()) + 180_000,
    );
    await sleep(1000);
    assert.deepEqual(await stored(offlineOnly), { n: OFFLINE_EVENTS, distinct: OFFLINE_EVENTS });
    assert.equal((await stored()).n, beforeOffline + OFFLINE_EVENTS, 'nothing else came');
    const summary = await get<{ totals: { calls: number; errors: number } }>(
      `/v1/admin/observability/summary?device_id=${deviceId}&session_id=${offline}`,
    );
    assert.equal(summary.totals.calls, OFFLINE_EVENTS);
    assert.equal(summary.totals.errors, OFFLINE_EVENTS / 10);
    await until(
      'the spool acknowledged',
      () => (loadDaemonStatus(stateDir)?.events.pending === 0 ? true : undefined),
      30_000,
    );
    assert.deepEqual(
      (await get<{ spool: Record<string, unknown> | null }>(`/v1/admin/devices/${deviceId}`)).spool?.dropped,
      0,
    );
  });

  test('the daemon stops on SIGTERM', async () => {
    daemon?.kill('SIGTERM');
    const [code] = (await Promise.race([
      once(daemon as ChildProcess, 'exit'),
      sleep(15_000).then(() => [null]),
    ])) as [number | null];
    assert.equal(code, 0, daemonOutput);
    assert.match(readFileSync(join(stateDir, 'logs', 'agent.log'), 'utf8'), /the service is reachable again/);
  });
});

/** The facts of an event the test checks by value (the ids and times are the service's and the hook's own). */
function pick(e: Event | undefined) {
  assert.ok(e, 'the event is there');
  const { agent_type, session_id, model, actor_email, event_type, result, error_message } = e;
  return { agent_type, session_id, model, actor_email, event_type, result, error_message };
}

const cmp = (x: Event | undefined, y: Event | undefined) =>
  Date.parse(x?.event_time ?? '') - Date.parse(y?.event_time ?? '');
