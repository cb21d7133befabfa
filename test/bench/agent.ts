// npm run bench:agent [-- section…] — the endpoint agent on a laptop: one function per section, each printing its
// figures against a baseline measured in the same run. With no argument every section runs.
//
// - hook: the latency a tool call gains from the agent's hook, run as a client runs it (the command the install
//   wrote into ~/.claude/settings.json, through sh, payload on stdin), against `node -e 0` run the same way.
//   Goal: p95 ≤ 1.5× the baseline's p95.
// - spool: appending events to the spool and reading them back in batches with an ack after each.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { installHooks } from '#agent/hooks/install.ts';
import { Spool } from '#agent/spool/spool.ts';
import {
  buildHookBundle,
  fixture,
  fixtureHome,
  installedCommand,
  runHookCommand,
} from '#test/support/hook-runner.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1] as number;
const ms = (xs: number[]) => `p50 ${median(xs).toFixed(1)} ms, p95 ${p95(xs).toFixed(1)} ms`;

async function hookSection() {
  const RUNS = Number(process.env.RUNS ?? 60);
  const home = fixtureHome(['claude-code']);
  const bundle = buildHookBundle();
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
      `\nhook — Claude Code's PreToolUse / PostToolUse commands as installed, through sh, ${RUNS} runs each`,
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
    rmSync(bundle, { force: true });
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

/** The sections, by name: the scan and the daemon add theirs here. */
const SECTIONS: Record<string, () => Promise<void>> = {
  hook: hookSection,
  spool: spoolSection,
};

const wanted = process.argv.slice(2);
for (const name of wanted)
  if (!SECTIONS[name]) throw new Error(`no section ${name}: ${Object.keys(SECTIONS).join(', ')}`);
console.log(`bench:agent — Node ${process.version}, ${process.platform}`);
for (const [name, run] of Object.entries(SECTIONS))
  if (wanted.length === 0 || wanted.includes(name)) await run();
