// bench:newcomer — a newcomer's first five minutes, timed on a fresh clone of this repository's HEAD:
//   1. `npm ci`, with an empty npm cache (what a first install downloads), and its three largest costs: npm's own
//      phase timers and the largest packages;
//   2. the first `npm start` until GET /v1/healthcheck answers 200, and where the time went (the 'service started'
//      log line gives each phase; the rest is Node starting and loading modules);
//   3. `npm test` as on a machine with only Node and npm (no TEST_DATABASE_URL: the run starts PostgreSQL from npm),
//      its three slowest test files, what the embedded PostgreSQL and the browser cost; and, when TEST_DATABASE_URL
//      names a server, `npm test` once more on it, to say how much the embedded server changes the total.
// Options: --skip-test (steps 1 and 2 only), --warm-cache (use the machine's npm cache for step 1).
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { launchChromium } from '#test/support/browser.ts';
import { freePort } from '#test/support/free-port.ts';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

const args = new Set(process.argv.slice(2));
const work = mkdtempSync(join(tmpdir(), 'acp-newcomer-'));
const clone = join(work, 'repo');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const { TEST_DATABASE_URL: existingServer, ...withoutServer } = process.env;
/** The environment of a machine with only Node and npm (no server named), and this run's TZ. */
const newcomerEnv = { ...withoutServer, TZ: 'UTC' };

function run(command: string, argv: string[], env: NodeJS.ProcessEnv): { ms: number; output: string } {
  const started = performance.now();
  const result = spawnSync(command, argv, { cwd: clone, env, encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - started;
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0)
    throw new Error(`${command} ${argv.join(' ')} exited ${result.status}:\n${output.slice(-4000)}`);
  return { ms, output };
}

function sizeOf(path: string): number {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0);
}

const say = (line = '') => console.log(line);

try {
  spawnSync('git', ['clone', '-q', PROJECT_ROOT, clone], { stdio: 'inherit' });
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
    cwd: clone,
    encoding: 'utf8',
  }).stdout.trim();
  say(
    `bench:newcomer — a fresh clone of ${head}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
  );

  // 1. npm ci
  const cache = args.has('--warm-cache') ? undefined : join(work, 'npm-cache');
  const ci = run(
    'npm',
    ['ci', '--no-audit', '--no-fund', '--timing', ...(cache ? ['--cache', cache] : [])],
    newcomerEnv,
  );
  const timers = cache
    ? (() => {
        const logs = join(cache, '_logs');
        const file = readdirSync(logs).find((f) => f.endsWith('-timing.json'));
        return file
          ? (JSON.parse(readFileSync(join(logs, file), 'utf8')) as { timers: Record<string, number> }).timers
          : {};
      })()
    : {};
  const phases = Object.entries(timers)
    .filter(([name]) => /^reify:/.test(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3);
  const modules = join(clone, 'node_modules');
  const packages = readdirSync(modules)
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => `${name}/${sub}`) : [name],
    )
    .filter((name) => !name.startsWith('.'))
    .map((name) => ({ name, bytes: sizeOf(join(modules, name)) }))
    .sort((a, b) => b.bytes - a.bytes);
  const total = packages.reduce((sum, p) => sum + p.bytes, 0);
  const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
  say();
  say(
    `1. npm ci (${cache ? 'empty npm cache' : "the machine's npm cache"}): ${seconds(ci.ms)}, ${mb(total)} in node_modules`,
  );
  for (const [name, ms] of phases) say(`   npm phase ${name}: ${seconds(ms)}`);
  for (const p of packages.slice(0, 3))
    say(`   package ${p.name}: ${mb(p.bytes)} (${((100 * p.bytes) / total).toFixed(0)} %)`);

  // 2. the first npm start
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: clone,
    env: { ...newcomerEnv, PORT: String(port), SVC_ADMIN_PASSWORD: 'a long local password' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let startOutput = '';
  child.stdout.on('data', (d: Buffer) => {
    startOutput += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    startOutput += d.toString();
  });
  let healthyMs = 0;
  while (!healthyMs) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${startOutput}`);
    if (performance.now() - started > 120_000)
      throw new Error(`npm start not healthy after 120 s:\n${startOutput}`);
    const res = await fetch(`http://127.0.0.1:${port}/v1/healthcheck`).catch(() => undefined);
    if (res?.status === 200) healthyMs = performance.now() - started;
    else await new Promise((r) => setTimeout(r, 25));
  }
  process.kill(-(child.pid as number), 'SIGTERM');
  const startedLine = startOutput.split('\n').find((l) => l.includes('"message":"service started"'));
  const startPhases = Object.entries((startedLine ? JSON.parse(startedLine) : {}) as Record<string, unknown>)
    .filter((e): e is [string, number] => e[0].endsWith('_ms') && typeof e[1] === 'number')
    .map(([name, ms]) => [name.replace(/_ms$/, '').replaceAll('_', ' '), ms] as [string, number]);
  const inPhases = startPhases.reduce((sum, [, ms]) => sum + ms, 0);
  startPhases.push(['npm, Node start-up and module loading', Math.max(0, healthyMs - inPhases)]);
  say();
  say(`2. first npm start until healthy: ${seconds(healthyMs)} (PGlite in ./.data, created on this start)`);
  for (const [name, ms] of startPhases.sort((a, b) => b[1] - a[1]).slice(0, 3))
    say(`   ${name}: ${seconds(ms)}`);

  if (!args.has('--skip-test')) {
    const browserStarted = performance.now();
    const browser = await launchChromium();
    await browser.close();
    const browserMs = performance.now() - browserStarted;

    const timed = (env: NodeJS.ProcessEnv, label: string) => {
      const timings = join(work, `timings-${label}.json`);
      const result = run('npm', ['test'], { ...env, TEST_FILE_TIMINGS: timings });
      const files = Object.entries(JSON.parse(readFileSync(timings, 'utf8')) as Record<string, number>).sort(
        (a, b) => b[1] - a[1],
      );
      const summary = /(\d+) passed, (\d+) failed/.exec(result.output)?.[0] ?? '?';
      const embedded = /embedded PostgreSQL on \S+ \(started in (\d+) ms\)/.exec(result.output)?.[1];
      return { ms: result.ms, files, summary, embeddedMs: embedded ? Number(embedded) : undefined };
    };
    const fresh = timed(newcomerEnv, 'embedded');
    say();
    say(`3. npm test with nothing but Node and npm: ${seconds(fresh.ms)} (${fresh.summary})`);
    for (const [file, ms] of fresh.files.slice(0, 3)) say(`   ${file}: ${seconds(ms)}`);
    say(
      `   embedded PostgreSQL start: ${fresh.embeddedMs ?? '?'} ms; Chromium from npm, unpack and launch: ${Math.round(browserMs)} ms`,
    );
    if (existingServer) {
      const onServer = timed({ ...newcomerEnv, TEST_DATABASE_URL: existingServer }, 'server');
      const ratio = fresh.ms / onServer.ms;
      say(
        `   the same run on the server of TEST_DATABASE_URL: ${seconds(onServer.ms)} (${onServer.summary}); ` +
          `with the embedded server npm test takes ${ratio.toFixed(2)}× as long (${seconds(fresh.ms - onServer.ms)})`,
      );
    } else say('   (set TEST_DATABASE_URL to also time npm test on an existing server, for comparison)');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
