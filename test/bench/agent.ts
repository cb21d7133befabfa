// npm run bench:agent [-- section…] — the endpoint agent on a laptop: one function per section, each printing its
// figures against a baseline measured in the same run. With no argument every section runs.
//
// - scan: `scanMachine` on a home with 8 clients and 200 projects, against reading the same files and nothing else.
// - hook: the latency a tool call gains from the agent's hook, run as a client runs it (the command the install
//   wrote into ~/.claude/settings.json, which starts the built single file, through sh, payload on stdin), against
//   `node -e 0` run the same way.
//   Goal: p95 ≤ 1.5× the baseline's p95.
// - policy: the hook's decision on a PreToolUse from a cached policy of 200 rules (source rules included, so the
//   server's source identity is read too), timed around the decision point inside the hook, against the same call
//   with no policy cached; and the installed command with that policy against without. Goal: the decision's p95
//   ≤ 5 ms.
// - proxy: a tools/call through `agent mcp-proxy` (the built single file, a 200-rule policy cached, each call
//   decided and spooled) against the same call on a direct connection to the same server (the reference everything
//   server from npm), from the real MCP SDK client, interleaved. Goal: p95 added ≤ 2 ms.
// - spool: appending events to the spool and reading them back in batches with an ack after each.
// - daemon: `agent run` (the built file, as the service runs it): resident memory after start and after flushing
//   10,000 events, idle CPU, against an idle `node` process.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeviceClient } from '#agent/client.ts';
import { CLIENTS } from '#agent/clients/index.ts';
import { loadDaemonStatus } from '#agent/daemon/status.ts';
import { scanMachine } from '#agent/discovery/scan.ts';
import { decide } from '#agent/hooks/decide.ts';
import { handleHook } from '#agent/hooks/handle.ts';
import { installHooks } from '#agent/hooks/install.ts';
import { savePolicyCache, saveServerSources } from '#agent/hooks/policy.ts';
import { createDeviceIdentity } from '#agent/identity.ts';
import { proxyArgv } from '#agent/proxy/command-line.ts';
import { McpProxy } from '#agent/proxy/proxy.ts';
import { daemonCommand } from '#agent/service/definition.ts';
import { openSpool, Spool } from '#agent/spool/spool.ts';
import { saveState } from '#agent/state.ts';
import { invocationEvent } from '#test/support/device-requests.ts';
import {
  buildAgentFile,
  fixture,
  fixtureHome,
  installedCommand,
  runHookCommand,
  spooledEvents,
} from '#test/support/hook-runner.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] as number;
const ms = (xs: number[]) => `p50 ${median(xs).toFixed(1)} ms, p95 ${p95(xs).toFixed(1)} ms`;

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A home with every client of agent/clients configured, and `projects` projects recorded by Claude Code. */
function laptopHome(projects: number): string {
  const home = mkdtempSync(join(tmpdir(), 'bench-agent-'));
  const stdio = (i: number) => ({
    command: 'npx',
    args: ['-y', `@acme/mcp-${i % 9}@1.${i}.0`, `--key=k${i}`],
    env: { TOKEN: `t${i}` },
  });
  const remote = (i: number) => ({ type: 'http', url: `https://mcp${i % 5}.example.com/v1/mcp?k=${i}` });
  const servers = (n: number, offset = 0) =>
    Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`srv-${i}`, i % 2 ? remote(i + offset) : stdio(i + offset)]),
    );
  const dirs = Array.from({ length: projects }, (_, i) => join(home, 'src', `project-${i}`));
  write(
    join(home, '.claude.json'),
    JSON.stringify({
      mcpServers: servers(6),
      projects: Object.fromEntries(
        dirs.map((d, i) => [d, { allowedTools: [], mcpServers: servers(i % 3, i) }]),
      ),
    }),
  );
  write(
    join(home, '.config', 'Claude', 'claude_desktop_config.json'),
    JSON.stringify({ mcpServers: servers(4) }),
  );
  write(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: servers(5) }));
  write(
    join(home, '.config', 'Code', 'User', 'mcp.json'),
    `// user servers\n${JSON.stringify({ servers: servers(5) }, null, 2)}`,
  );
  write(join(home, '.codeium', 'windsurf', 'mcp_config.json'), JSON.stringify({ mcpServers: servers(4) }));
  write(
    join(home, '.codex', 'config.toml'),
    '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "@upstash/context7-mcp"]\n',
  );
  write(join(home, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: servers(3) }));
  write(
    join(home, '.config', 'zed', 'settings.json'),
    `// zed\n${JSON.stringify({ context_servers: servers(3) }, null, 2)}`,
  );
  dirs.forEach((dir, i) => {
    // Each project uses a few of the clients, as repositories do.
    write(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: servers(2, i) }));
    if (i % 2 === 0) write(join(dir, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: servers(2, i) }));
    if (i % 3 === 0) write(join(dir, '.vscode', 'mcp.json'), JSON.stringify({ servers: servers(2, i) }));
    if (i % 5 === 0)
      write(join(dir, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: servers(1, i) }));
    if (i % 7 === 0)
      write(join(dir, '.codex', 'config.toml'), `[mcp_servers.p${i}]\nurl = "https://x.example/${i}"\n`);
  });
  return home;
}

async function scanSection() {
  const PROJECTS = 200;
  const RUNS = 15;
  const home = laptopHome(PROJECTS);
  try {
    const options = { home, platform: 'linux' as const, env: {}, systemRoot: home };
    const first = await scanMachine(options);
    const files = first.watchedPaths;
    const servers = first.clients.reduce((n, c) => n + c.servers.length, 0);
    // The baseline: the same files read (those absent fail as they do for the scan), 64 at a time, nothing parsed.
    const readOnly = async () => {
      const queue = [...files];
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          for (let f = queue.pop(); f; f = queue.pop()) await readFile(f).catch(() => undefined);
        }),
      );
    };
    // Wall time, and the process's CPU time (user + system), which a busy shared machine disturbs less.
    const timed = async (run: () => Promise<unknown>) => {
      const cpu = process.cpuUsage();
      const t = performance.now();
      await run();
      const used = process.cpuUsage(cpu);
      return { wall: performance.now() - t, cpu: (used.user + used.system) / 1000 };
    };
    type Run = { wall: number; cpu: number };
    const scans: Run[] = [];
    const reads: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      reads.push(await timed(readOnly));
      scans.push(await timed(() => scanMachine(options)));
    }
    const wall = (runs: Run[]) => runs.map((r) => r.wall);
    const cpu = (runs: Run[]) => runs.map((r) => r.cpu);
    const line = (runs: Run[]) =>
      `wall median ${median(wall(runs)).toFixed(1)} ms (p95 ${p95(wall(runs)).toFixed(1)}), CPU median ${median(cpu(runs)).toFixed(1)} ms`;
    console.log(
      `\nscan — ${first.clients.length} clients (of ${CLIENTS.length}), ${PROJECTS} projects, ${files.length} paths looked at, ${servers} servers, ${RUNS} runs`,
    );
    console.log(`  read the same files only: ${line(reads)}`);
    console.log(`  scanMachine:              ${line(scans)}`);
    console.log(
      `  scan / read (medians): wall ${(median(wall(scans)) / median(wall(reads))).toFixed(2)}×, CPU ${(median(cpu(scans)) / median(cpu(reads))).toFixed(2)}×`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function hookSection() {
  const RUNS = Number(process.env.RUNS ?? 60);
  const home = fixtureHome(['claude-code']);
  // The file laptops run (npm run agent:build): the installed command starts all of it, not just the hook's code.
  const bundle = buildAgentFile(join(mkdtempSync(join(tmpdir(), 'bench-hook-')), 'acp-agent.cjs'));
  try {
    installHooks({ stateDir: home.stateDir, env: home.env, hookEntry: bundle });
    const pre = installedCommand(home.file('claude-code'), 'claude-code', 'PreToolUse');
    const post = installedCommand(home.file('claude-code'), 'claude-code', 'PostToolUse');
    const baseline = `${process.execPath} -e 0`;
    const body = (file: string, id: number) =>
      JSON.stringify({ ...JSON.parse(fixture('claude-code', file)), tool_use_id: `toolu_${id}` });
    const env = { PATH: process.env.PATH, HOME: home.home };
    const cwd = home.home;
    const times = { baseline: [] as number[], pre: [] as number[], post: [] as number[] };
    // Interleaved, so that machine noise hits the baseline and the hook alike.
    for (let i = -3; i < RUNS; i++) {
      const runs = [
        await runHookCommand(baseline, '', { cwd, env }),
        await runHookCommand(pre, body('pre-tool-use.json', i), { cwd, env }),
        await runHookCommand(post, body('post-tool-use.json', i), { cwd, env }),
      ];
      if (runs.some((run) => run.code !== 0)) throw new Error(`a run failed: ${JSON.stringify(runs)}`);
      if (i < 0) continue; // warm-up: the file system cache, the first spool segment
      times.baseline.push(runs[0]?.ms as number);
      times.pre.push(runs[1]?.ms as number);
      times.post.push(runs[2]?.ms as number);
    }
    const events = new Spool(join(home.stateDir, 'spool'), { graceMs: 0 }).stats().pending;
    console.log(
      `\nhook — Claude Code's PreToolUse / PostToolUse commands as installed (the built single file), through sh, ${RUNS} runs each`,
    );
    console.log(`  node -e 0 (baseline):  ${ms(times.baseline)}`);
    console.log(
      `  hook, PreToolUse:      ${ms(times.pre)}   ${(p95(times.pre) / p95(times.baseline)).toFixed(2)}× at p95`,
    );
    console.log(
      `  hook, PostToolUse:     ${ms(times.post)}   ${(p95(times.post) / p95(times.baseline)).toFixed(2)}× at p95`,
    );
    console.log(`  goal p95 ≤ 1.5× the baseline; ${events} events spooled`);
  } finally {
    rmSync(home.home, { recursive: true, force: true });
    rmSync(dirname(bundle), { recursive: true, force: true });
  }
}

/** A policy of `n` rules that a call to github's search_code passes all of, to its default. */
function benchPolicy(n: number) {
  const rules = Array.from({ length: n }, (_, i) => ({
    id: `rule-${i}`,
    effect: i % 2 ? ('allow' as const) : ('deny' as const),
    mode: i % 10 === 0 ? ('audit' as const) : ('enforce' as const),
    match:
      i % 3 === 0
        ? { source: `npm:@acme/mcp-${i}*` }
        : i % 3 === 1
          ? { server: `srv-${i}-*`, tool: 'write_*' }
          : { group: 'finance', device_tag: `kiosk-${i}` },
    reason: `Rule ${i}.`,
  }));
  return {
    rules,
    default: { effect: 'allow' as const, reason: 'No rule applies.' },
    no_cache: 'open' as const,
  };
}

async function policySection() {
  const RUNS = Number(process.env.RUNS ?? 2000);
  const SPAWNS = Number(process.env.SPAWNS ?? 40);
  const bare = fixtureHome(['claude-code']);
  const withPolicy = fixtureHome(['claude-code']);
  const bundle = buildAgentFile(join(mkdtempSync(join(tmpdir(), 'bench-policy-')), 'acp-agent.cjs'));
  try {
    const policy = benchPolicy(200);
    const now = Date.now();
    savePolicyCache(withPolicy.stateDir, {
      version: 7,
      etag: '"7-x"',
      fetchedAt: now,
      checkedAt: now,
      policy,
    });
    saveServerSources(withPolicy.stateDir, 'claude-code', {
      github: 'npm:@modelcontextprotocol/server-github',
    });
    const body = (id: number, server = 'github', tool = 'search_code') =>
      JSON.stringify({
        ...JSON.parse(fixture('claude-code', 'pre-tool-use.json')),
        tool_name: `mcp__${server}__${tool}`,
        tool_use_id: `toolu_${id}`,
      });
    // The decision's own time: timed around the hook's decision point, as the hook runs it (the cache read from
    // disk, the source identity read, the rules evaluated), inside a whole PreToolUse.
    const own = { policy: [] as number[], denied: [] as number[], none: [] as number[] };
    const decided = (stateDir: string, stdin: string, into: number[]) => {
      const answer = handleHook(
        { clientId: 'claude-code', event: 'PreToolUse', stateDir, stdin },
        {
          decide: (call, context) => {
            const started = performance.now();
            const decision = decide(call, context);
            into.push(performance.now() - started);
            return decision;
          },
        },
      );
      return answer.stdout;
    };
    for (let i = -50; i < RUNS; i++) {
      const sink: number[] = [];
      const none = decided(bare.stateDir, body(i), i < 0 ? sink : own.none);
      const allowed = decided(withPolicy.stateDir, body(i), i < 0 ? sink : own.policy);
      // rule-4 (deny srv-4-* write_*) is the first enforce rule this call matches.
      const denied = decided(
        withPolicy.stateDir,
        body(i, 'srv-4-x', 'write_file'),
        i < 0 ? sink : own.denied,
      );
      if (none !== '' || allowed !== '' || !denied.includes('"deny"')) throw new Error('unexpected decision');
    }
    console.log(
      `\npolicy — the hook's decision, timed inside a PreToolUse (${RUNS} runs each), 200 rules cached`,
    );
    console.log(`  no policy cached (baseline):         ${ms(own.none)}`);
    console.log(
      `  allowed by the default (all rules):  ${ms(own.policy)}   ${(p95(own.policy) / p95(own.none)).toFixed(2)}× at p95`,
    );
    console.log(
      `  denied by an early rule:             ${ms(own.denied)}   ${(p95(own.denied) / p95(own.none)).toFixed(2)}× at p95`,
    );
    console.log(`  goal p95 ≤ 5 ms: ${p95(own.policy) <= 5 && p95(own.denied) <= 5 ? 'met' : 'NOT met'}`);

    installHooks({ stateDir: bare.stateDir, env: bare.env, hookEntry: bundle });
    installHooks({ stateDir: withPolicy.stateDir, env: withPolicy.env, hookEntry: bundle });
    const spawned = { bare: [] as number[], policy: [] as number[] };
    for (let i = -3; i < SPAWNS; i++) {
      const runs = [
        await runHookCommand(
          installedCommand(bare.file('claude-code'), 'claude-code', 'PreToolUse'),
          body(i),
          {
            cwd: bare.home,
            env: { PATH: process.env.PATH, HOME: bare.home },
          },
        ),
        await runHookCommand(
          installedCommand(withPolicy.file('claude-code'), 'claude-code', 'PreToolUse'),
          body(i),
          { cwd: withPolicy.home, env: { PATH: process.env.PATH, HOME: withPolicy.home } },
        ),
      ];
      if (runs.some((run) => run.code !== 0)) throw new Error(`a run failed: ${JSON.stringify(runs)}`);
      if (i < 0) continue;
      spawned.bare.push(runs[0]?.ms as number);
      spawned.policy.push(runs[1]?.ms as number);
    }
    console.log(`  the installed command, through sh (${SPAWNS} runs each):`);
    console.log(`    no policy cached (baseline):   ${ms(spawned.bare)}`);
    console.log(
      `    200 rules cached:              ${ms(spawned.policy)}   ${(p95(spawned.policy) / p95(spawned.bare)).toFixed(2)}× at p95`,
    );
  } finally {
    rmSync(bare.home, { recursive: true, force: true });
    rmSync(withPolicy.home, { recursive: true, force: true });
    rmSync(dirname(bundle), { recursive: true, force: true });
  }
}

async function spoolSection() {
  const EVENTS = Number(process.env.EVENTS ?? 50_000);
  const dir = join(fixtureHome([]).home, 'spool');
  try {
    const event = (n: number) => ({
      event_id: `0b0f6d3e-5a8e-4f6c-9d47-${String(n).padStart(12, '0')}`,
      event_time: new Date().toISOString(),
      agent_type: 'claude-code',
      mcp_name: 'github',
      tool: 'create_issue',
      event_type: 'result',
      result: 'allowed',
      duration_ms: 412,
      session_id: 'sess-42',
      model: 'claude-sonnet-4-6',
      metadata: { source: 'hook', hook_event: 'PostToolUse', paired: true },
    });
    const spool = new Spool(dir, { graceMs: 0 });
    let t = performance.now();
    for (let n = 0; n < EVENTS; n++) spool.append(event(n));
    const appendMs = performance.now() - t;
    const { bytes } = spool.stats();
    t = performance.now();
    let read = 0;
    for (let batch = spool.readBatch(1000); batch.length > 0; batch = spool.readBatch(1000)) {
      read += batch.length;
      spool.ack((batch.at(-1) as (typeof batch)[number]).position);
    }
    const readMs = performance.now() - t;
    if (read !== EVENTS) throw new Error(`read ${read} of ${EVENTS}`);
    const rate = (n: number, time: number) =>
      `${Math.round((n / time) * 1000).toLocaleString('en')} events/s`;
    console.log(
      `\nspool — ${EVENTS.toLocaleString('en')} events of ${Math.round(bytes / EVENTS)} bytes on disk`,
    );
    console.log(
      `  append (one process, one open+write+close each): ${rate(EVENTS, appendMs)}, ${((appendMs / EVENTS) * 1000).toFixed(0)} µs each`,
    );
    console.log(`  read + ack in batches of 1,000:                  ${rate(EVENTS, readMs)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Resident memory (and its peak) and CPU time so far of process `pid`, from /proc (Linux). */
function processUsage(pid: number): { rssMb: number; peakMb: number; cpuMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  // utime and stime, fields 14 and 15 of /proc/<pid>/stat (after the command name in parentheses), in clock ticks.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024, cpuMs: (ticks * 1000) / hz };
}

/**
 * daemon: `agent run` from the built single file, against the local service, on a home with Claude Code and Cursor:
 * its resident memory once it has sent the inventory and after it has flushed 10,000 spooled events, and its CPU
 * while idle (IDLE_SECONDS, default 60); against an idle `node` process in the same run. Goal: ≤ 80 MB resident,
 * near-zero idle CPU.
 */
async function daemonSection() {
  const EVENTS = 10_000;
  const idleSeconds = Number(process.env.IDLE_SECONDS ?? 60);
  const root = mkdtempSync(join(tmpdir(), 'bench-daemon-'));
  // DAEMON_NODE: another Node to run the daemon with (the laptop's), default the one running the benchmark.
  const node = process.env.DAEMON_NODE ?? process.execPath;
  const { service, database } = await (async () => {
    const { provisionDatabase } = await import('#test/support/databases.ts');
    const { startCheckedService, testConfig } = await import('#test/support/service.ts');
    const { createLogger, setLogLevel } = await import('#shared/core/logger.ts');
    setLogLevel('warn');
    const db = await provisionDatabase('pglite');
    const config = testConfig({ dashboard_url: 'http://dashboard.test', db: { dsn: db.dsn } });
    return {
      service: (await startCheckedService({ config, log: createLogger({ test: true }) })).service,
      database: db,
    };
  })();
  const children: ChildProcess[] = [];
  try {
    const { TEST_ADMIN } = await import('#test/support/service.ts');
    const login = await fetch(`${service.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(TEST_ADMIN),
    });
    const admin = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const identity = await createDeviceIdentity('p256');
    const { body } = await new DeviceClient({ baseUrl: service.url, identity }).register(admin, {
      serialNumber: 'BENCH-DAEMON',
      brand: 'Bench',
      model: 'Laptop',
    });
    const stateDir = join(root, 'state');
    saveState(stateDir, { identity, deviceId: body.deviceId, baseUrl: service.url });
    const home = join(root, 'home');
    write(
      join(home, '.claude.json'),
      JSON.stringify({
        mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem'] } },
      }),
    );
    write(
      join(home, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { github: { url: 'https://api.githubcopilot.com/mcp/' } } }),
    );
    const bundle = buildAgentFile(join(root, 'acp-agent.cjs'));

    const spawnIdle = (args: string[]) => {
      const child = spawn(node, args, {
        env: { PATH: process.env.PATH ?? '', HOME: home, TZ: 'UTC' },
        stdio: 'ignore',
      });
      children.push(child);
      return child;
    };
    const baseline = spawnIdle(['-e', 'setInterval(() => {}, 1 << 30)']);
    // Exactly the command the service definitions run (agent/service/definition.ts).
    const [, ...daemonArgs] = daemonCommand(node, bundle, stateDir);
    const daemon = spawnIdle(daemonArgs);
    const wait = async (what: string, probe: () => boolean, timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!probe()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await wait('the inventory', () => !!loadDaemonStatus(stateDir)?.inventory.sentAt);
    await new Promise((r) => setTimeout(r, 1000));
    const started = processUsage(daemon.pid as number);
    const bare = processUsage(baseline.pid as number);

    const spool = openSpool(stateDir);
    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i++) spool.append(invocationEvent());
    const appendMs = performance.now() - t0;
    await wait('10,000 events sent', () => (loadDaemonStatus(stateDir)?.events.stored ?? 0) >= EVENTS);
    const flushMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 2000));
    const flushed = processUsage(daemon.pid as number);

    const idleFrom = processUsage(daemon.pid as number);
    const bareFrom = processUsage(baseline.pid as number);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idleTo = processUsage(daemon.pid as number);
    const bareTo = processUsage(baseline.pid as number);
    const pct = (a: { cpuMs: number }, b: { cpuMs: number }) =>
      ((b.cpuMs - a.cpuMs) / (idleSeconds * 1000)) * 100;

    console.log(
      `\ndaemon — the built file as the service runs it, by Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}; a local service on PGlite; ${EVENTS} events`,
    );
    console.log(`  an idle node process:            ${bare.rssMb.toFixed(1)} MB resident`);
    console.log(
      `  the daemon after start:          ${started.rssMb.toFixed(1)} MB resident (${(started.rssMb / bare.rssMb).toFixed(2)}× idle node)`,
    );
    console.log(
      `  after flushing ${EVENTS} events:    ${flushed.rssMb.toFixed(1)} MB resident, peak ${flushed.peakMb.toFixed(1)} MB (goal ≤ 80 MB); appended in ${appendMs.toFixed(0)} ms, all stored ${(flushMs / 1000).toFixed(1)} s after the first append`,
    );
    console.log(
      `  idle CPU over ${idleSeconds} s:           daemon ${pct(idleFrom, idleTo).toFixed(3)} % (${(idleTo.cpuMs - idleFrom.cpuMs).toFixed(0)} ms), idle node ${pct(bareFrom, bareTo).toFixed(3)} % (${(bareTo.cpuMs - bareFrom.cpuMs).toFixed(0)} ms)`,
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await service.stop();
    await database.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
}

async function proxySection() {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const everything = fileURLToPath(
    import.meta.resolve('@modelcontextprotocol/server-everything/dist/index.js'),
  );
  const root = mkdtempSync(join(tmpdir(), 'bench-proxy-'));
  const bundle = buildAgentFile(join(root, 'acp-agent.cjs'));
  const stateDir = join(root, 'state');
  const now = Date.now();
  savePolicyCache(stateDir, {
    version: 1,
    etag: '"1"',
    fetchedAt: now,
    checkedAt: now,
    policy: benchPolicy(200),
  });
  const server = [everything, 'stdio'];
  const open = async (command: string, args: string[]) => {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
    return client;
  };
  const direct = await open(process.execPath, server);
  const proxied = await open(process.execPath, [
    bundle,
    ...proxyArgv({
      client: 'vscode',
      server: 'everything',
      stateDir,
      command: process.execPath,
      args: server,
    }),
  ]);
  const RUNS = 1000;
  const times = { direct: [] as number[], proxied: [] as number[] };
  try {
    const call = async (client: InstanceType<typeof Client>, into: number[]) => {
      const started = performance.now();
      await client.callTool({ name: 'echo', arguments: { message: 'bench' } });
      into.push(performance.now() - started);
    };
    for (let i = 0; i < 50; i++) {
      await call(direct, []);
      await call(proxied, []);
    }
    // Interleaved, so that machine noise hits both alike.
    for (let i = 0; i < RUNS; i++) {
      await call(direct, times.direct);
      await call(proxied, times.proxied);
    }
  } finally {
    await direct.close();
    await proxied.close();
  }
  // The proxy's own work per call (read, decide, record), in-process, without the pipes and the scheduler.
  const core = new McpProxy(
    { stateDir, clientId: 'vscode', server: 'everything' },
    () => true,
    () => true,
  );
  const own: number[] = [];
  for (let i = 0; i < RUNS * 3; i++) {
    const started = performance.now();
    core.fromClient(
      Buffer.from(
        `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench"}}}\n`,
      ),
    );
    core.fromServer(
      Buffer.from(
        `{"jsonrpc":"2.0","id":${i},"result":{"content":[{"type":"text","text":"Echo: bench"}]}}\n`,
      ),
    );
    own.push(performance.now() - started);
  }
  const added = {
    p50: median(times.proxied) - median(times.direct),
    p95: p95(times.proxied) - p95(times.direct),
  };
  console.log(
    `\nproxy — tools/call echo from the MCP SDK client to the everything server, ${RUNS} calls each, 200 rules cached`,
  );
  console.log(`  direct:                ${ms(times.direct)}`);
  console.log(`  through mcp-proxy:     ${ms(times.proxied)}`);
  console.log(
    `  added:                 p50 ${added.p50.toFixed(2)} ms, p95 ${added.p95.toFixed(2)} ms; goal p95 ≤ 2 ms: ${added.p95 <= 2 ? 'met' : 'NOT met'}; ${spooledEvents(stateDir).length - RUNS * 3} events spooled`,
  );
  console.log(
    `  the proxy's own work:  p50 ${median(own).toFixed(3)} ms, p95 ${p95(own).toFixed(3)} ms per call (in-process, ${RUNS * 3} calls)`,
  );
  rmSync(root, { recursive: true, force: true });
}

/** The sections, by name: the daemon adds its own here. */
const SECTIONS: Record<string, () => Promise<void>> = {
  scan: scanSection,
  hook: hookSection,
  policy: policySection,
  proxy: proxySection,
  spool: spoolSection,
  daemon: daemonSection,
};

const wanted = process.argv.slice(2);
for (const name of wanted)
  if (!SECTIONS[name]) throw new Error(`no section ${name}: ${Object.keys(SECTIONS).join(', ')}`);
console.log(`bench:agent — Node ${process.version}, ${process.platform}`);
for (const [name, run] of Object.entries(SECTIONS))
  if (wanted.length === 0 || wanted.includes(name)) await run();
