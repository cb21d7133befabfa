// The test scripts of package.json in one place: npm test (everything), one area (unit, integration, infra, e2e),
// test:fast (unit, and integration on PGlite only), or the files named after `--`. Each runs Node's test runner with
// the same global setup (a PostgreSQL from npm when TEST_DATABASE_URL is unset and a driver needs one) and reporters
// (the closing "N passed, N failed" line). npm puts node_modules/.bin first on PATH, so this runs on the project's
// Node 24 whatever Node the machine has.
// npm test, an area and the named files run one file at a time, each in its own process, since the end-to-end files
// drive browsers and whole stacks whose timeouts assume a machine of their own. test:fast runs the unit files together
// in one process (they share no state, and a process per file cost more than their tests) beside the integration
// files in groups, each group in one process (Node, the modules and PGlite load once per group, not once per file),
// one more group at once than the machine has cores; each test there has a database of its own, and a file that changes
// process-wide state (an environment variable, the log sink) puts it back. Its property, fuzz and crash suites draw a
// quarter of their cases (test/support/runs.ts). TEST_CONCURRENCY overrides the files (or groups) at once. Every
// script keeps Node's compile cache in node_modules/.cache, so the test processes and the agent processes they start
// reuse the compiled TypeScript of earlier runs.
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AREAS = {
  unit: ['test/unit/**/*.test.ts'],
  integration: ['test/integration/**/*.test.ts'],
  infra: ['test/infra/**/*.test.ts'],
  e2e: ['test/e2e/**/*.test.ts'],
} as const;
type Area = keyof typeof AREAS;

/**
 * test:fast's groups at once: one more than the cores, since a group spends part of its time waiting (timers, the
 * services it starts), and with only as many groups as cores the cores sit partly idle.
 */
const FAST_POOL = Number(process.env.TEST_CONCURRENCY) || availableParallelism() + 1;
/**
 * test:fast's integration files share a process in groups, so that loading Node, the modules and PGlite is paid per
 * group rather than per file; several groups per slot, so that a group that takes longer than its size says is
 * evened out by the others.
 */
const INTEGRATION_GROUPS = 3 * FAST_POOL;

const USAGE = `usage: node scripts/test.ts all | fast | <area>... | -- <file>...   (areas: ${Object.keys(AREAS).join(', ')})`;

/** One run of Node's test runner. */
interface Run {
  name: string;
  files: readonly string[];
  env: Record<string, string>;
  concurrency: number;
  /** `none`: the files share one process. */
  isolation: 'process' | 'none';
  /** Waits for a free slot (FAST_POOL) before it starts. */
  pooled: boolean;
}

const oneAtATime = (name: string, files: readonly string[]): Run[] => [
  { name, files, env: {}, concurrency: 1, isolation: 'process', pooled: false },
];

/**
 * The files in `count` groups of about equal size in bytes (the largest file first into the smallest group), the
 * largest group first: a group that starts last then ends about when the others do.
 */
function groups(patterns: readonly string[], count: number): string[][] {
  const files = patterns
    .flatMap((pattern) => globSync(pattern))
    .map((file) => ({ file, size: statSync(file).size }))
    .sort((a, b) => b.size - a.size || a.file.localeCompare(b.file));
  const bins = Array.from({ length: Math.min(count, files.length) }, () => ({
    size: 0,
    files: [] as string[],
  }));
  for (const { file, size } of files) {
    const smallest = bins.reduce((min, bin) => (bin.size < min.size ? bin : min));
    smallest.files.push(file);
    smallest.size += size;
  }
  return bins.sort((a, b) => b.size - a.size).map((bin) => bin.files.sort());
}

function plan(args: string[]): Run[] {
  const dash = args.indexOf('--');
  if (dash >= 0) return oneAtATime('files', args.slice(dash + 1));
  if (args.length === 0 || args[0] === 'all') return oneAtATime('all', Object.values(AREAS).flat());
  if (args[0] === 'fast' && args.length === 1) {
    const env = { TEST_DRIVERS: 'pglite', TEST_RUNS_SCALE: '0.25' };
    const unit: Run = {
      name: 'unit',
      files: AREAS.unit,
      env,
      concurrency: 1,
      isolation: 'none',
      pooled: false,
    };
    return [
      unit,
      ...groups(AREAS.integration, INTEGRATION_GROUPS).map(
        (files, i): Run => ({
          name: `integration ${i + 1}`,
          files,
          env,
          concurrency: 1,
          isolation: 'none',
          pooled: true,
        }),
      ),
    ];
  }
  const unknown = args.filter((a) => !(a in AREAS));
  if (unknown.length) {
    process.stderr.write(`unknown test area: ${unknown.join(', ')}\n${USAGE}\n`);
    process.exit(2);
  }
  return oneAtATime(
    args.join(' '),
    args.flatMap((a) => AREAS[a as Area]),
  );
}

const runs = plan(process.argv.slice(2));
if (runs.some((run) => run.files.length === 0)) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

function start(run: Run, output: 'inherit' | 'pipe') {
  const args = [
    '--test',
    `--test-isolation=${run.isolation}`,
    '--test-global-setup=./test/support/global-setup.ts',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/support/summary-reporter.ts',
    '--test-reporter-destination=stdout',
  ];
  if (run.isolation === 'process')
    args.push(`--test-concurrency=${process.env.TEST_CONCURRENCY || run.concurrency}`);
  return spawn(process.execPath, [...args, ...run.files], {
    stdio: ['inherit', output, output],
    env: {
      NODE_COMPILE_CACHE: fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)),
      ...process.env,
      TZ: 'UTC',
      ...run.env,
    },
  });
}

const children = new Set<ReturnType<typeof start>>();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    interrupted = true;
    for (const child of children) child.kill(signal);
  });

const [only] = runs;
if (only && runs.length === 1) {
  const child = start(only, 'inherit');
  children.add(child);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  // Several runs at once, the pooled ones as slots come free; each prints when it ends, then the totals. They count
  // the responses checked against the OpenAPI document in one directory, whose figures are printed here.
  const coverage = mkdtempSync(join(tmpdir(), 'acp-contract-'));
  process.env.CONTRACT_COVERAGE_DIR = coverage;
  let free = FAST_POOL;
  const waiting: Array<() => void> = [];
  const acquire = async () => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  const outcomes = await Promise.all(
    runs.map(async (run) => {
      if (run.pooled) await acquire();
      // Interrupted: the runs still waiting for a slot do not start.
      if (interrupted) {
        release();
        return { run, code: 1, passed: 0, failed: 0, counted: false, seconds: 0 };
      }
      const started = performance.now();
      const child = start(run, 'pipe');
      children.add(child);
      let text = '';
      for (const stream of [child.stdout, child.stderr]) {
        stream?.setEncoding('utf8');
        stream?.on('data', (chunk: string) => {
          text += chunk;
        });
      }
      const code = await new Promise<number>((resolve) =>
        child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
      );
      children.delete(child);
      const seconds = Math.round((performance.now() - started) / 1000);
      if (run.pooled) release();
      process.stdout.write(`\n--- ${run.name} ---\n${text}`);
      const counts = [...text.matchAll(/^(\d+) passed, (\d+) failed$/gm)].at(-1);
      return {
        run,
        code,
        passed: Number(counts?.[1] ?? 0),
        failed: Number(counts?.[2] ?? 0),
        counted: !!counts,
        seconds,
      };
    }),
  );
  const lines = outcomes.map(
    (o) =>
      `${o.run.name}: ${o.counted ? `${o.passed} passed, ${o.failed} failed` : `exit code ${o.code}, no summary`} (${o.seconds} s)`,
  );
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const { contractFigures } = await import('../test/support/contract.ts');
  const figures = contractFigures(coverage);
  rmSync(coverage, { recursive: true, force: true });
  process.stdout.write(
    `\n${figures ? `${figures}\n\n` : ''}${lines.join('\n')}\n${passed} passed, ${failed} failed\n`,
  );
  process.exit(outcomes.some((o) => o.code !== 0) ? 1 : 0);
}
