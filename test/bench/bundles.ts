// Bundle size and cold module-load time of every Lambda, as the stack bundles them (infra/bundling.ts: minified ESM,
// code splitting, here without source maps), against a hello-world handler bundled the same way in the same run.
//   npm run bench:bundles              prints the table (RUNS=20 fresh processes per bundle by default)
//   npm run bench:bundles -- --write   also writes it into the README's Performance section, between its markers
// Load time is the wall time of a fresh `node` process that imports the bundle's index.mjs (and with it the chunks
// it imports statically), checks its `handler` export and exits: what a Lambda cold start pays for the code before
// the first invocation. The chunks split off behind `import()` (the runtime: config, Secrets Manager, the Data API
// client; the authenticators) load during the first invocation; the "all chunks" columns import every chunk too, to
// show that cost. Processes are interleaved across bundles so that machine noise hits every row alike.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CHUNK_FILE, ENTRY_FILE, lambdaBundling } from '../../infra/bundling.ts';
import { loadDeployment } from '../../infra/settings.ts';
import { ControlPlaneStack } from '../../infra/stack.ts';
import { cdkJsonContext, PROJECT_ROOT } from '../infra/synth.ts';

const RUNS = Number(process.env.RUNS ?? 20);
const SIZE_GOAL_BYTES = 450 * 1024;
const LOAD_GOAL_RATIO = 2.5;
const RESULTS_FILE = join(PROJECT_ROOT, 'README.md');
export const MARKERS = {
  start: '<!-- bench:bundles:start (written by `npm run bench:bundles -- --write`) -->',
  end: '<!-- bench:bundles:end -->',
} as const;

interface Row {
  name: string;
  what: string;
  dir: string;
  /** index.mjs and the chunks it imports statically: what the function loads before its first invocation. */
  startBytes: number;
  /** Every .mjs file of the bundle. */
  allBytes: number;
  loadMs: number[];
  allMs: number[];
}

/** index.mjs plus every chunk reachable from it through static imports (`import … from "./chunk-….mjs"`). */
export function startupFiles(dir: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(dir, file), 'utf8');
    for (const match of code.matchAll(/(?:\bfrom|\bimport)\s*["']\.\/(chunk-[A-Z0-9]+\.mjs)["']/g)) {
      visit(match[1]!);
    }
  };
  visit(ENTRY_FILE);
  return [...seen];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const kb = (bytes: number) => (bytes / 1024).toFixed(1);

function table(rows: Row[], paired: ReadonlyMap<Row, number[]>, esbuildVersion: string): string {
  const lines = [
    `Bundles as the stack builds them (esbuild ${esbuildVersion}, minified ESM with code splitting, no source map), ` +
      `Node ${process.version} on ${process.arch} (${cpus().length} CPUs), median of ${RUNS} fresh processes each, ` +
      'each paired with a hello-world process run just before it (ratios are to the paired runs). ' +
      `"Start" is index.mjs and the chunks it imports statically (what loads before the first invocation); "all" adds ` +
      'the chunks behind `import()` (the runtime and the authenticators, loaded by the first invocation). Goals: start ' +
      `and all ≤ ${SIZE_GOAL_BYTES / 1024} KB each, and start load ≤ ${LOAD_GOAL_RATIO}× hello world.`,
    '',
    '| Function | Serves | Start (KB) | All (KB) | Load (ms) | Load ÷ hello | Size goal | Load goal | Load all (ms) | All ÷ hello |',
    '|---|---|---:|---:|---:|---:|:---:|:---:|---:|---:|',
  ];
  let passed = 0;
  for (const row of rows) {
    const load = median(row.loadMs);
    const all = median(row.allMs);
    const isBaseline = row === rows[0];
    const hello = isBaseline ? load : median(paired.get(row)!);
    const ratio = load / hello;
    const sizeOk = row.startBytes <= SIZE_GOAL_BYTES && row.allBytes <= SIZE_GOAL_BYTES;
    const loadOk = ratio <= LOAD_GOAL_RATIO;
    if (!isBaseline && sizeOk && loadOk) passed++;
    lines.push(
      `| ${row.name} | ${row.what} | ${kb(row.startBytes)} | ${kb(row.allBytes)} | ${load.toFixed(1)} | ` +
        `${ratio.toFixed(2)}× | ${isBaseline ? '—' : sizeOk ? 'PASS' : 'FAIL'} | ` +
        `${isBaseline ? '—' : loadOk ? 'PASS' : 'FAIL'} | ${all.toFixed(1)} | ${(all / hello).toFixed(2)}× |`,
    );
  }
  lines.push('', `${passed} of ${rows.length - 1} functions meet both goals.`);
  return lines.join('\n');
}

/** Puts `text` between the markers of `file` (creating the file, or the markers at its end, when missing). */
export function writeBetweenMarkers(file: string, text: string): void {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = '# Bundle benchmark\n\nThe latest `npm run bench:bundles -- --write`.\n\n';
  }
  const block = `${MARKERS.start}\n${text}\n${MARKERS.end}`;
  const start = current.indexOf(MARKERS.start);
  const end = current.indexOf(MARKERS.end);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${block}${current.slice(end + MARKERS.end.length)}`
      : `${current.replace(/\n*$/, '\n\n')}${block}\n`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, next);
}

async function main() {
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, 'acp-bench-bundles-'));
  try {
    // The hello-world handler lives under the project root (NodejsFunction requires it), in the scratch directory.
    const helloEntry = join(work, 'hello-world.ts');
    writeFileSync(helloEntry, "export const handler = async () => ({ statusCode: 200, body: 'hello' });\n");

    // CDK bundles each function's asset as the construct is created.
    process.stderr.write('bundling every function (esbuild)…\n');
    const context: Record<string, unknown> = { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true };
    const outdir = join(work, 'cdk.out');
    const app = new App({ context, outdir });
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
      bundling: lambdaBundling({ entry: helloEntry, stagingDir: outdir, sourceMap: false }),
    });
    const assembly = app.synth();

    // A function's asset is named in the template of its own stack: a feature's nested stack, or the root.
    const assetDir = (element: CfnElement) => {
      const fnStack = Stack.of(element);
      const template = JSON.parse(readFileSync(join(assembly.directory, fnStack.templateFile), 'utf8')) as {
        Resources: Record<string, { Metadata?: Record<string, string> }>;
      };
      const path = template.Resources[fnStack.getLogicalId(element)]?.Metadata?.['aws:asset:path'];
      if (!path) throw new Error(`no asset for ${element.node.path}`);
      return join(assembly.directory, path);
    };
    const row = (name: string, what: string, dir: string): Row => {
      const all = readdirSync(dir).filter((file) => file === ENTRY_FILE || CHUNK_FILE.test(file));
      const size = (files: string[]) => files.reduce((n, file) => n + statSync(join(dir, file)).size, 0);
      return {
        name,
        what,
        dir,
        startBytes: size(startupFiles(dir)),
        allBytes: size(all),
        loadMs: [],
        allMs: [],
      };
    };

    const rows: Row[] = [row('hello world', 'baseline', assetDir(hello.node.defaultChild as CfnElement))];
    for (const planned of stack.plan) {
      const fn = stack.functions.get(planned.handler)!;
      const what = [
        ...planned.routes.map((r) => `${r.method} ${r.path}`),
        ...planned.schedules.map((s) => `every ${s.everyMs / 60_000} min`),
        ...(planned.defaultRoute ? ['$default (what no route matches)'] : []),
      ].join(', ');
      rows.push(row(planned.handler, what, assetDir(fn.node.defaultChild as CfnElement)));
    }
    rows.push(
      row('migrate (deploy)', 'CDK Trigger', assetDir(stack.migrateFunction.node.defaultChild as CfnElement)),
    );

    const loader = join(work, 'load.mjs');
    writeFileSync(
      loader,
      [
        "import { readdirSync } from 'node:fs';",
        "import { join } from 'node:path';",
        'const [dir, all] = process.argv.slice(2);',
        "const m = await import(join(dir, 'index.mjs'));",
        "if (typeof m.handler !== 'function') process.exit(3);",
        'if (all) for (const f of readdirSync(dir)) if (/^chunk-.*\\.mjs$/.test(f)) await import(join(dir, f));',
        '',
      ].join('\n'),
    );

    // Each measurement of a function is paired with one of hello world taken just before it, and the function's
    // ratio is the median of its times over the median of its paired baselines: on a busy machine the load drifts
    // during a run, and a baseline taken once per round would favour the rows measured next to it.
    const baseline = rows[0]!;
    const functions = rows.slice(1);
    const spawnLoad = (dir: string, all: boolean) => {
      const started = performance.now();
      const result = spawnSync(process.execPath, [loader, dir, ...(all ? ['all'] : [])], {
        env: { TZ: 'UTC' },
        stdio: 'ignore',
      });
      const elapsed = performance.now() - started;
      if (result.status !== 0) throw new Error(`${dir}: the bundle does not load (exit ${result.status})`);
      return elapsed;
    };
    const paired = new Map<Row, number[]>(functions.map((r) => [r, []]));
    process.stderr.write(
      `measuring ${functions.length} bundles × ${RUNS} fresh processes (paired with hello world)…\n`,
    );
    for (let run = 0; run < RUNS + 1; run++) {
      // A different order each round, so that no function always follows another.
      const order = [...functions].sort(() => Math.random() - 0.5);
      for (const r of order) {
        const hello = spawnLoad(baseline.dir, false);
        const load = spawnLoad(r.dir, false);
        const all = spawnLoad(r.dir, true);
        // The first round warms the file cache and is not counted.
        if (run === 0) continue;
        baseline.loadMs.push(hello);
        baseline.allMs.push(hello);
        paired.get(r)!.push(hello);
        r.loadMs.push(load);
        r.allMs.push(all);
      }
    }

    const esbuildVersion = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, 'node_modules/esbuild/package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    const text = table(rows, paired, esbuildVersion);
    process.stdout.write(`${MARKERS.start}\n${text}\n${MARKERS.end}\n`);
    if (process.argv.includes('--write')) {
      writeBetweenMarkers(RESULTS_FILE, text);
      process.stderr.write(`written to ${RESULTS_FILE}\n`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (import.meta.main) await main();
