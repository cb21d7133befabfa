// npm run bench:bundle-stubs — what each stand-in of infra/bundling.ts buys: every function is built as the stack
// builds it (esbuildOptions + infra/bundle/split.ts, the deployment's config choosing the providers), then again
// without one stand-in at a time, and the sizes are compared. A stand-in stays only where leaving it out breaks a
// goal (every bundle ≤ 450 KB in all; start load ≤ 2.5× hello world, which grows with the start size): the table
// says, per stand-in, the KB it saves (median and largest over the functions, start and all) and which functions
// would go over 450 KB without it. Load time is measured by npm run bench:bundles; the stand-ins that only move
// code out of the start (the builtin shims, libpg-query's late load) show up there, not here.
//   BENCH_CONFIG=config/prod.toml (default) picks the deployment.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildSplit } from '../../infra/bundle/split.ts';
import {
  CONFIG_ALIASES,
  type DeploymentChoices,
  ENTRY_FILE,
  esbuildOptions,
  INTERNAL_STUBS,
  type InternalStub,
  LATE_ALIASES,
  LAZY_BUILTINS,
  SDK_ALIASES,
  type SplitBuild,
  TOKEN_AUTHENTICATOR_STUB,
} from '../../infra/bundling.ts';
import { generatedModules } from '../../infra/generated-modules.ts';
import { planFunctions } from '../../infra/plan.ts';
import { loadDeployment } from '../../infra/settings.ts';
import { PROJECT_ROOT } from '../infra/synth.ts';

const SIZE_GOAL_KB = 450;
const configFile = join(PROJECT_ROOT, process.env.BENCH_CONFIG ?? 'config/prod.toml');
const { config } = loadDeployment(configFile, {});
const deployment: DeploymentChoices = {
  authProvider: config.auth.provider === 'idp' ? 'idp' : 'local',
  envProvider: config.envsvc.provider === 'http' ? 'http' : 'builtin',
};

/** One stand-in, and how to build without it. */
interface Piece {
  name: string;
  without(split: SplitBuild): void;
  /** Also build without the function's own route table module. */
  wholeRouteTable?: boolean;
}
const dropAlias = (keys: string[]) => (split: SplitBuild) => {
  const alias = split.options.alias as Record<string, string>;
  for (const key of keys) delete alias[key];
};
const dropStubs = (stubFile: string) => (split: SplitBuild) => {
  split.stubs = split.stubs.filter((s: InternalStub) => s.stub !== stubFile);
};
const pieces: Piece[] = [
  ...Object.entries({ ...SDK_ALIASES, ...CONFIG_ALIASES, ...LATE_ALIASES }).map(([pkg, file]) => ({
    name: `alias ${pkg} → ${file.replace('.//', '')}`,
    without: dropAlias([pkg]),
  })),
  ...[...new Set(INTERNAL_STUBS.map((s) => s.stub)), TOKEN_AUTHENTICATOR_STUB.stub].map((stub) => ({
    name: `stub ${stub}`,
    without: dropStubs(stub),
  })),
  {
    name: `${LAZY_BUILTINS.length} builtin shims (infra/bundle/node-*.cjs)`,
    without: dropAlias(LAZY_BUILTINS.flatMap((n) => [n, `node:${n}`])),
  },
  {
    name: 'package.json reduced to its version',
    without: (split) => {
      split.versionOnlyPackageJson = '^$';
    },
  },
  {
    name: 'source rewrites (zod util namespace)',
    without: (split) => {
      split.rewrites = [];
    },
  },
  {
    name: 'SDK schema keys as string literals',
    without: (split) => {
      split.literalSchemaKeys = '^$';
    },
  },
  { name: 'per-function route table (infra/route-tables.ts)', without: () => {}, wholeRouteTable: true },
];

const work = mkdtempSync(join(PROJECT_ROOT, 'node_modules', '.cache', 'acp-bench-stubs-'));
const plan = planFunctions(config, PROJECT_ROOT);

/** index.mjs and the chunks it imports statically, and every .mjs file. */
function sizes(dir: string): { start: number; all: number } {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(dir, file), 'utf8');
    for (const m of code.matchAll(/(?:\bfrom|\bimport)\s*["']\.\/(chunk-[A-Z0-9]+\.mjs)["']/g))
      visit(m[1] as string);
  };
  visit(ENTRY_FILE);
  const size = (files: Iterable<string>) => [...files].reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  return { start: size(seen) / 1024, all: size(readdirSync(dir).filter((f) => f.endsWith('.mjs'))) / 1024 };
}

async function buildAll(piece: Piece | undefined): Promise<Map<string, { start: number; all: number }>> {
  const out = new Map<string, { start: number; all: number }>();
  for (const fn of plan) {
    const modules = piece?.wholeRouteTable
      ? undefined
      : generatedModules(fn.handler, fn.entry, join(work, 'generated'));
    const split = esbuildOptions(
      { entry: fn.entry, stagingDir: work, sourceMap: false, deployment, ...(modules ? { modules } : {}) },
      PROJECT_ROOT,
    );
    split.options.alias = { ...(split.options.alias as Record<string, string>) };
    piece?.without(split);
    const dir = join(work, 'out', fn.handler.replace('/', '-'));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await buildSplit(split, dir, { logLevel: 'silent' });
    out.set(fn.handler, sizes(dir));
  }
  return out;
}

const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};
const kb = (n: number) => n.toFixed(1);

const t0 = performance.now();
const base = await buildAll(undefined);
const over = [...base].filter(([, s]) => s.all > SIZE_GOAL_KB).map(([h, s]) => `${h} (${kb(s.all)} KB)`);
console.log(
  `${plan.length} functions of ${configFile.replace(`${PROJECT_ROOT}/`, '')} (auth.provider = "${deployment.authProvider}", envsvc.provider = "${deployment.envProvider}"), as the stack builds them: largest all ${kb(Math.max(...[...base.values()].map((s) => s.all)))} KB; over ${SIZE_GOAL_KB} KB: ${over.join(', ') || 'none'}\n`,
);
console.log(
  '| Left out | Start: KB saved, median / largest | All: KB saved, median / largest | Over 450 KB without it |',
);
console.log('|---|---:|---:|---|');
for (const piece of pieces) {
  const without = await buildAll(piece);
  const dStart = [...without].map(([h, s]) => s.start - (base.get(h)?.start ?? 0));
  const dAll = [...without].map(([h, s]) => s.all - (base.get(h)?.all ?? 0));
  const breaks = [...without]
    .filter(([h, s]) => s.all > SIZE_GOAL_KB && (base.get(h)?.all ?? 0) <= SIZE_GOAL_KB)
    .map(([h]) => h);
  console.log(
    `| ${piece.name} | ${kb(median(dStart))} / ${kb(Math.max(...dStart))} | ${kb(median(dAll))} / ${kb(Math.max(...dAll))} | ${breaks.join(', ') || '—'} |`,
  );
}
console.log(
  `\n${pieces.length + 1} builds of ${plan.length} functions in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);
rmSync(work, { recursive: true, force: true });
