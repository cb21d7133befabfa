// Bundle size and cold module-load time of every Lambda, as the stack bundles them (infra/bundling.ts, minified,
// without source maps), against a hello-world handler bundled the same way in the same run.
//   npm run bench:bundles            (RUNS=20 by default; the median of RUNS fresh processes per bundle)
// Load time is the wall time of a fresh `node` process that imports the bundle, checks its `handler` export and
// exits: what a Lambda cold start pays for the code before the first invocation. Processes are interleaved across
// bundles so that machine noise hits every row alike.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { lambdaBundling } from '../../infra/bundling.ts';
import { loadDeployment } from '../../infra/settings.ts';
import { ControlPlaneStack } from '../../infra/stack.ts';
import { cdkJsonContext, PROJECT_ROOT } from '../infra/synth.ts';

const RUNS = Number(process.env.RUNS ?? 20);
const SIZE_GOAL_BYTES = 450 * 1024;
const LOAD_GOAL_RATIO = 2.5;

const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const work = mkdtempSync(join(cache, 'acp-bench-bundles-'));
try {
  // The hello-world handler lives under the project root (NodejsFunction requires it), in the scratch directory.
  const helloEntry = join(work, 'hello-world.ts');
  writeFileSync(helloEntry, "export const handler = async () => ({ statusCode: 200, body: 'hello' });\n");

  const context: Record<string, unknown> = { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true };
  const app = new App({ context, outdir: join(work, 'cdk.out') });
  const deployment = loadDeployment(resolve(PROJECT_ROOT, String(context.config)), context);
  const stack = new ControlPlaneStack(app, 'Bench', {
    deployment,
    projectRoot: PROJECT_ROOT,
    sourceMaps: false,
  });
  const helloStack = new Stack(app, 'BenchHelloWorld');
  const hello = new NodejsFunction(helloStack, 'HelloWorld', {
    entry: helloEntry,
    handler: 'handler',
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
    bundling: lambdaBundling({ sourceMap: false }),
  });
  const assembly = app.synth();

  const assetDir = (fnStack: Stack, element: CfnElement) => {
    const template = JSON.parse(
      readFileSync(join(assembly.directory, `${fnStack.artifactId}.template.json`), 'utf8'),
    ) as { Resources: Record<string, { Metadata?: Record<string, string> }> };
    const path = template.Resources[fnStack.getLogicalId(element)]?.Metadata?.['aws:asset:path'];
    if (!path) throw new Error(`no asset for ${element.node.path}`);
    return join(assembly.directory, path);
  };

  interface Row {
    name: string;
    what: string;
    file: string;
    bytes: number;
    wallMs: number[];
  }
  const rows: Row[] = [
    {
      name: 'hello world',
      what: 'baseline',
      file: join(assetDir(helloStack, hello.node.defaultChild as CfnElement), 'index.mjs'),
      bytes: 0,
      wallMs: [],
    },
  ];
  for (const planned of stack.plan) {
    const fn = stack.functions.get(planned.handler)!;
    rows.push({
      name: planned.handler,
      what: [
        ...planned.routes.map((r) => `${r.method} ${r.path}`),
        ...planned.schedules.map((s) => `every ${s.everyMs / 60_000} min`),
      ].join(', '),
      file: join(assetDir(stack, fn.node.defaultChild as CfnElement), 'index.mjs'),
      bytes: 0,
      wallMs: [],
    });
  }
  rows.push({
    name: 'migrate (deploy)',
    what: 'CDK Trigger',
    file: join(assetDir(stack, stack.migrateFunction.node.defaultChild as CfnElement), 'index.mjs'),
    bytes: 0,
    wallMs: [],
  });

  const loader = join(work, 'load.mjs');
  writeFileSync(
    loader,
    "const m = await import(process.argv[2]); if (typeof m.handler !== 'function') process.exit(3);\n",
  );
  for (const row of rows) row.bytes = statSync(row.file).size;

  process.stderr.write(`measuring ${rows.length} bundles × ${RUNS} fresh processes…\n`);
  for (let run = 0; run < RUNS + 1; run++) {
    for (const row of rows) {
      const started = performance.now();
      const result = spawnSync(process.execPath, [loader, row.file], { env: { TZ: 'UTC' }, stdio: 'ignore' });
      const elapsed = performance.now() - started;
      if (result.status !== 0)
        throw new Error(`${row.name}: the bundle does not load (exit ${result.status})`);
      // The first round warms the file cache and is not counted.
      if (run > 0) row.wallMs.push(elapsed);
    }
  }

  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const baseline = median(rows[0]!.wallMs);
  const esbuildVersion = (
    JSON.parse(readFileSync(join(PROJECT_ROOT, 'node_modules/esbuild/package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const lines = [
    `Bundles as the stack builds them (esbuild ${esbuildVersion}, minified, ESM, no source map), Node ${process.version}, ${RUNS} fresh processes each (median).`,
    '',
    '| Function | Serves | Size (KB) | Load (ms) | Load ÷ hello world | Goals (≤ 450 KB, ≤ 2.5×) |',
    '|---|---|---:|---:|---:|:---:|',
  ];
  for (const row of rows) {
    const load = median(row.wallMs);
    const ratio = load / baseline;
    const ok = row.bytes <= SIZE_GOAL_BYTES && ratio <= LOAD_GOAL_RATIO;
    lines.push(
      `| ${row.name} | ${row.what} | ${(row.bytes / 1024).toFixed(1)} | ${load.toFixed(1)} | ${ratio.toFixed(2)}× | ${
        row === rows[0]
          ? '—'
          : ok
            ? 'yes'
            : `no (${[row.bytes > SIZE_GOAL_BYTES ? 'size' : '', ratio > LOAD_GOAL_RATIO ? 'load' : ''].filter(Boolean).join(', ')})`
      } |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  rmSync(work, { recursive: true, force: true, maxRetries: 5 });
}
