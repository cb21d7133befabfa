// The test scripts of package.json in one place: npm test (everything), one area (unit, integration, infra, e2e),
// test:fast (unit, and integration on PGlite only), or the files named after `--`. Each runs Node's test runner with
// the same global setup (a PostgreSQL from npm when TEST_DATABASE_URL is unset and a driver needs one) and reporters
// (the closing "N passed, N failed" line). npm puts node_modules/.bin first on PATH, so this runs on the project's
// Node 24 whatever Node the machine has.
// test:fast runs several files at once (each in its own process, on its own database); the other scripts one at a
// time, since the end-to-end files drive browsers and whole stacks whose timeouts assume a machine of their own.
// TEST_CONCURRENCY overrides either. Every script keeps Node's compile cache in node_modules/.cache, so the test
// processes and the agent processes they start reuse the compiled TypeScript of earlier runs.
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

interface Plan {
  files: string[];
  env: Record<string, string>;
  concurrency: number;
}

function plan(args: string[]): Plan {
  const dash = args.indexOf('--');
  if (dash >= 0) return { files: args.slice(dash + 1), env: {}, concurrency: 1 };
  if (args.length === 0 || args[0] === 'all')
    return { files: Object.values(AREAS).flat(), env: {}, concurrency: 1 };
  if (args[0] === 'fast' && args.length === 1) {
    // One file per core: with more, the timing-bound tests (lockouts, fuzz limits) time out on a busy machine.
    return {
      files: [...AREAS.unit, ...AREAS.integration],
      env: { TEST_DRIVERS: 'pglite' },
      concurrency: availableParallelism(),
    };
  }
  const unknown = args.filter((a) => !(a in AREAS));
  if (unknown.length) {
    process.stderr.write(`unknown test area: ${unknown.join(', ')}\n${USAGE}\n`);
    process.exit(2);
  }
  return { files: args.flatMap((a) => AREAS[a as Area]), env: {}, concurrency: 1 };
}

const { files, env, concurrency } = plan(process.argv.slice(2));
if (files.length === 0) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
const child = spawn(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${process.env.TEST_CONCURRENCY || concurrency}`,
    '--test-global-setup=./test/support/global-setup.ts',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/support/summary-reporter.ts',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  {
    stdio: 'inherit',
    env: {
      NODE_COMPILE_CACHE: fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)),
      ...process.env,
      TZ: 'UTC',
      ...env,
    },
  },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
