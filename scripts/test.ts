// The test scripts of package.json in one place: npm test (everything), one area (unit, integration, infra, e2e),
// test:fast (unit, and integration on PGlite only), or the files named after `--`. Each runs Node's test runner with
// the same global setup (a PostgreSQL from npm when TEST_DATABASE_URL is unset and a driver needs one) and reporters
// (the closing "N passed, N failed" line). npm puts node_modules/.bin first on PATH, so this runs on the project's
// Node 24 whatever Node the machine has.
// npm test, an area and the named files run one file at a time, each in its own process, since the end-to-end files
// drive browsers and whole stacks whose timeouts assume a machine of their own. test:fast is two runs at once: the
// unit files together in one process (they share no state, and a process per file cost more than their tests), and
// the integration files one per core, each in its own process on its own database; its property, fuzz and crash
// suites draw a quarter of their cases (test/support/runs.ts). TEST_CONCURRENCY overrides the files at once. Every
// script keeps Node's compile cache in node_modules/.cache, so the test processes and the agent processes they start
// reuse the compiled TypeScript of earlier runs.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const AREAS = {
  unit: ['test/unit/**/*.test.ts'],
  integration: ['test/integration/**/*.test.ts'],
  infra: ['test/infra/**/*.test.ts'],
  e2e: ['test/e2e/**/*.test.ts'],
} as const;
type Area = keyof typeof AREAS;

const USAGE = `usage: node scripts/test.ts all | fast | <area>... | -- <file>...   (areas: ${Object.keys(AREAS).join(', ')})`;

/** One run of Node's test runner. */
interface Run {
  name: string;
  files: readonly string[];
  env: Record<string, string>;
  concurrency: number;
  /** `none`: the files share one process. */
  isolation: 'process' | 'none';
}

const oneAtATime = (name: string, files: readonly string[]): Run[] => [
  { name, files, env: {}, concurrency: 1, isolation: 'process' },
];

function plan(args: string[]): Run[] {
  const dash = args.indexOf('--');
  if (dash >= 0) return oneAtATime('files', args.slice(dash + 1));
  if (args.length === 0 || args[0] === 'all') return oneAtATime('all', Object.values(AREAS).flat());
  if (args[0] === 'fast' && args.length === 1) {
    const env = { TEST_DRIVERS: 'pglite', TEST_RUNS_SCALE: '0.25' };
    return [
      { name: 'unit', files: AREAS.unit, env, concurrency: 1, isolation: 'none' },
      // One file per core: with more, the timing-bound tests (lockouts, fuzz limits) time out on a busy machine.
      {
        name: 'integration',
        files: AREAS.integration,
        env,
        concurrency: availableParallelism(),
        isolation: 'process',
      },
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
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });

const [only] = runs;
if (only && runs.length === 1) {
  const child = start(only, 'inherit');
  children.add(child);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  // Several runs at once: the last one prints as it goes, the others when they end; then the totals.
  const outcomes = await Promise.all(
    runs.map(async (run, i) => {
      const live = i === runs.length - 1;
      const child = start(run, 'pipe');
      children.add(child);
      let text = '';
      for (const stream of [child.stdout, child.stderr]) {
        stream?.setEncoding('utf8');
        stream?.on('data', (chunk: string) => {
          text += chunk;
          if (live) (stream === child.stdout ? process.stdout : process.stderr).write(chunk);
        });
      }
      const code = await new Promise<number>((resolve) =>
        child.on('close', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
      );
      if (!live) process.stdout.write(`\n--- ${run.name} ---\n${text}`);
      const counts = [...text.matchAll(/^(\d+) passed, (\d+) failed$/gm)].at(-1);
      return {
        run,
        code,
        passed: Number(counts?.[1] ?? 0),
        failed: Number(counts?.[2] ?? 0),
        counted: !!counts,
      };
    }),
  );
  const lines = outcomes.map(
    (o) =>
      `${o.run.name}: ${o.counted ? `${o.passed} passed, ${o.failed} failed` : `exit code ${o.code}, no summary`}`,
  );
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  process.stdout.write(`\n${lines.join('\n')}\n${passed} passed, ${failed} failed\n`);
  process.exit(outcomes.some((o) => o.code !== 0) ? 1 : 0);
}
