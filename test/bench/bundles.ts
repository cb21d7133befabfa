// npm run bench:bundles — the cold start of every Lambda against a hello-world function, both bundled as the stack
// bundles them (infra/bundling.ts, here without source maps unless profiling), in the same run.
// Cold start is what Lambda pays before it answers the first request of a new instance: a fresh `node` process
// loads the bundle's index.js and calls its handler once (test/infra/bundle-invoke.ts), with the function's
// environment from the template, on the Data API path (the real SDK client against test/support/data-api-server.ts on
// PostgreSQL, TEST_DATABASE_URL or one started from npm). The request is the bundle test's: each function's first
// route, signed in as an admin where it takes a token, with an empty body where it takes one; a schedule's event.
// The AWS SDK is bundled (pinned), so nothing is loaded from the runtime's copy. Each function's process is paired
// with a hello-world process run just before it; the ratio is the median of its times over the median of its pairs.
// The Data API client alone (built and sending one statement, bundled the same way) is measured the same way: the
// floor under every function that reads the database.
//   RUNS=10 npm run bench:bundles
//   ONLY='^catalog/|^health/' RUNS=3 npm run bench:bundles      (the functions whose handler matches)
//   PROFILE=/tmp/profiles ONLY=catalog/get RUNS=1 npm run bench:bundles   (a CPU profile of each cold start, and
//   the bundles with their source maps in PROFILE/bundles)
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import type { RouteSpec } from '#shared/core/http/route.ts';
import { createUser } from '#shared/identity/users.ts';
import { routes } from '#shared/routes.ts';
import { createPostgresDatabase, useBenchDatabase } from '#test/support/databases.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { ENTRY_FILE } from '../../infra/bundling.ts';
import { LAMBDA_CONFIG_PATH } from '../../infra/settings.ts';
import { httpEvent, LAMBDA_ENVIRONMENT, localStoresConfig, RUNNER } from '../infra/bundle-invoke.ts';
import { bundleFunction, PROJECT_ROOT, synth } from '../infra/synth.ts';

const RUNS = Number(process.env.RUNS ?? 10);
const ONLY = new RegExp(process.env.ONLY ?? '');
const PROFILE = process.env.PROFILE;
const GOAL_RATIO = 2.5;

interface Subject {
  name: string;
  dir: string;
  event: unknown;
  env: Record<string, string>;
  times: number[];
  paired: number[];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** A subject's cold start over its paired hello-world runs (medians). */
const ratioOf = (subject: Subject) => median(subject.times) / median(subject.paired);

/** A subject's row of the table. */
const row = (subject: Subject, goal: string) =>
  `| ${subject.name} | ${(statSync(join(subject.dir, ENTRY_FILE)).size / 1024).toFixed(1)} | ` +
  `${median(subject.times).toFixed(1)} | ${ratioOf(subject).toFixed(2)}× | ${goal} |`;

async function main() {
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, 'acp-bench-bundles-'));
  await useBenchDatabase();
  const database = await createPostgresDatabase();
  const { startDataApiServer } = await import('#test/support/data-api-server.ts');
  const server = await startDataApiServer({ connectionString: database.url });
  try {
    process.stderr.write('bundling every function (esbuild)…\n');
    const synthesized = synth({ bundle: true, sourceMaps: Boolean(PROFILE), outdir: join(work, 'cdk.out') });
    const helloEntry = join(work, 'hello-world.ts');
    writeFileSync(helloEntry, "export const handler = async () => ({ statusCode: 200, body: 'hello' });\n");
    const helloDir = bundleFunction(join(work, 'hello.out'), { entry: helloEntry, sourceMap: false });
    // The floor every function stands on: the Data API client alone, built by the functions' own driver code
    // (shared/core/db/data-api-client.ts) and sending one statement, bundled the same way.
    const clientEntry = join(work, 'data-api-client.ts');
    writeFileSync(
      clientEntry,
      `import { ExecuteStatementCommand } from '@aws-sdk/client-rds-data';
import { createDataApiClient } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/core/db/data-api-client.ts'))};
const env = (name: string) => process.env[name] ?? '';
const client = createDataApiClient({ region: env('AWS_REGION'), endpoint: env('BENCH_DATA_API_ENDPOINT') });
export const handler = async () => {
  const out = await client.send(new ExecuteStatementCommand({ resourceArn: env('BENCH_RESOURCE_ARN'),
    secretArn: env('BENCH_SECRET_ARN'), database: env('BENCH_DATABASE'), sql: 'SELECT 1' }));
  return { statusCode: 200, body: String(out.records?.length) };
};
`,
    );
    const clientDir = bundleFunction(join(work, 'client.out'), { entry: clientEntry, sourceMap: false });

    const jwtSecret = randomSecret();
    const config = synthesized.deployment.config;
    const local = await connectDatabase({ db: { ...config.db, dsn: database.url } });
    await migrate(local.db);
    const admin = await createUser(
      local.db,
      { email: 'admin@bench.test', name: 'Admin', password: randomSecret(), roles: ['admin'] },
      { id: 'bench', email: 'bench', ipAddress: '' },
    );
    await local.close();
    const { access_token: token } = await issueLocalToken(
      { ...config, auth: { ...config.auth, jwt_secret: jwtSecret } },
      { subject: admin.id, email: 'admin@bench.test', name: 'Admin', roles: ['admin'] },
    );
    const dsn = `data-api://${server.database}?resourceArn=${server.resourceArn}&secretArn=${server.secretArn}&region=us-east-1&endpoint=${server.url}`;

    const resources = synthesized.template.toJSON().Resources as Record<
      string,
      {
        Metadata?: Record<string, string>;
        Properties: { Environment?: { Variables: Record<string, unknown> } };
      }
    >;
    const subjects: Subject[] = [];
    for (const planned of synthesized.stack.plan.filter(({ handler }) => ONLY.test(handler))) {
      const element = synthesized.stack.functions.get(planned.handler)!.node.defaultChild as CfnElement;
      const resource = resources[synthesized.stack.getLogicalId(element)]!;
      // Copied into the project, so that the local drivers' externals would resolve as they do in the bundle test.
      const dir = join(work, planned.constructId);
      cpSync(join(synthesized.outdir, resource.Metadata!['aws:asset:path']!), dir, { recursive: true });
      const variables = resource.Properties.Environment?.Variables ?? {};
      const env = Object.fromEntries(
        Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
      const first = planned.routes[0];
      const route = first ? (routes as Record<string, RouteSpec>)[first.id]! : undefined;
      // The $default route's function answers what no row matches.
      const event = route
        ? httpEvent(route, {
            ...(route.auth === 'public' || route.auth === 'device' ? {} : { token }),
            ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
          })
        : planned.schedules[0]
          ? { schedule: planned.schedules[0].id }
          : { ...httpEvent(routes.healthcheck), routeKey: '$default', rawPath: '/v1/nowhere' };
      subjects.push({
        name: planned.handler,
        dir,
        event,
        env: {
          ...env,
          AWS_LAMBDA_FUNCTION_NAME: planned.constructId,
          SVC_CONFIG:
            planned.handler === 'audit/anchor' || planned.handler === 'observability/archive'
              ? localStoresConfig(
                  join(dir, basename(LAMBDA_CONFIG_PATH)),
                  mkdtempSync(join(work, 'anchors-')),
                )
              : join(dir, basename(LAMBDA_CONFIG_PATH)),
          SVC_DB_DSN: dsn,
          SVC_JWT_SECRET: jwtSecret,
          SVC_ENVSVC_TOKEN: randomSecret(),
          SVC_AUDIT_INGEST_TOKEN: randomSecret(),
        },
        times: [],
        paired: [],
      });
    }
    const hello: Subject = { name: 'hello world', dir: helloDir, event: {}, env: {}, times: [], paired: [] };
    const floor: Subject = {
      name: 'the Data API client alone (one statement)',
      dir: clientDir,
      event: {},
      env: {
        BENCH_DATA_API_ENDPOINT: server.url,
        BENCH_RESOURCE_ARN: server.resourceArn,
        BENCH_SECRET_ARN: server.secretArn,
        BENCH_DATABASE: server.database,
      },
      times: [],
      paired: [],
    };

    const runner = join(work, 'invoke.mjs');
    writeFileSync(runner, RUNNER);
    // Asynchronous: the Data API endpoint the functions call runs in this process and must keep answering.
    const coldStart = async (subject: Subject) => {
      const eventFile = join(work, 'event.json');
      const resultFile = join(work, 'result.json');
      writeFileSync(eventFile, JSON.stringify(subject.event));
      const started = performance.now();
      const profile = PROFILE
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${PROFILE}`,
            `--cpu-prof-name=${subject.name.replace('/', '-')}.${Math.round(started)}.cpuprofile`,
          ]
        : [];
      const child = spawn(
        process.execPath,
        [...profile, runner, join(subject.dir, ENTRY_FILE), eventFile, resultFile],
        {
          cwd: subject.dir,
          env: { ...LAMBDA_ENVIRONMENT, ...subject.env },
          stdio: 'ignore',
        },
      );
      const status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      const elapsed = performance.now() - started;
      const outcome = JSON.parse(readFileSync(resultFile, 'utf8')) as { error?: unknown };
      if (status !== 0 || outcome.error)
        throw new Error(`${subject.name}: ${JSON.stringify(outcome.error ?? status)}`);
      return elapsed;
    };

    process.stderr.write(
      `measuring ${subjects.length} functions × ${RUNS} cold starts (paired with hello world)…\n`,
    );
    for (let run = 0; run <= RUNS; run++) {
      // A different order each round, so that no function always follows another.
      for (const subject of [...subjects, floor].sort(() => Math.random() - 0.5)) {
        const baseline = await coldStart(hello);
        const time = await coldStart(subject);
        // The first round warms the file cache and is not counted.
        if (run === 0) continue;
        hello.times.push(baseline);
        subject.paired.push(baseline);
        subject.times.push(time);
      }
    }

    const esbuild = JSON.parse(
      readFileSync(join(PROJECT_ROOT, 'node_modules/esbuild/package.json'), 'utf8'),
    ) as {
      version: string;
    };
    const lines = [
      `Cold start (module load + first request), esbuild ${esbuild.version}, Node ${process.version} on ` +
        `${process.arch} (${cpus().length} CPUs), median of ${RUNS} fresh processes each. Goal: ≤ ${GOAL_RATIO}× hello world.`,
      '',
      '| Function | Bundle (KB) | Cold start (ms) | ÷ hello world | Goal |',
      '|---|---:|---:|---:|:---:|',
      `| hello world | ${(statSync(join(helloDir, ENTRY_FILE)).size / 1024).toFixed(1)} | ${median(hello.times).toFixed(1)} | 1.00× | — |`,
      row(floor, '—'),
    ];
    let passed = 0;
    const ratios: number[] = [];
    for (const subject of subjects.sort((a, b) => a.name.localeCompare(b.name))) {
      const ratio = ratioOf(subject);
      ratios.push(ratio);
      if (ratio <= GOAL_RATIO) passed++;
      lines.push(row(subject, ratio <= GOAL_RATIO ? 'PASS' : 'FAIL'));
    }
    lines.push(
      '',
      `${passed} of ${subjects.length} functions meet the goal; median ratio ${median(ratios).toFixed(2)}×, ` +
        `largest ${Math.max(...ratios).toFixed(2)}×; the Data API client alone ${ratioOf(floor).toFixed(2)}×.`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await server.close();
    await database.drop();
    // The bundles stay next to their profiles, for mapping a profile's positions to sources.
    if (PROFILE) cpSync(work, join(PROFILE, 'bundles'), { recursive: true });
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (import.meta.main) await main();
