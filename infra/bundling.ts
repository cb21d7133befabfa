// How every Lambda is bundled (the stack's NodejsFunctions and the bundle benchmark use these same settings).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BundlingOptions, ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * Drivers Lambda never loads: shared/db/connect.ts imports them with `await import(...)` only for the pglite: and
 * postgres:// DSNs, and the functions always run on the Data API. `pg-native` is pg's optional native binding.
 */
export const LOCAL_DRIVER_MODULES = [
  '@electric-sql/pglite',
  'pg',
  'pg-native',
  'drizzle-orm/pglite',
  'drizzle-orm/node-postgres',
] as const;

/**
 * Parts of the pinned, bundled AWS SDK that Lambda never runs, replaced at bundle time (esbuild `alias`; paths are
 * relative to the project root, where esbuild runs):
 * - the default credential chain → environment credentials only (what Lambda provides);
 * - the event-stream codec → a stub (no operation we call streams).
 */
export const SDK_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './infra/bundle/credential-provider-env.ts',
  '@smithy/core/event-streams': './infra/bundle/no-event-streams.ts',
};

/**
 * zod without what Lambda never uses: its ~40 locales (only English, which zod installs itself), `z.core`,
 * `fromJSONSchema` and `deepPartial` (see infra/bundle/zod.ts). `{ z } from 'zod'` is a namespace used as a
 * value, which no bundler can tree-shake, so the namespace itself is replaced.
 */
export const ZOD_ALIAS: Readonly<Record<string, string>> = { zod: './infra/bundle/zod.ts' };

/**
 * libpg-query (the query proxy's SQL parser) loaded by its `loadModule()` rather than on import: importing the
 * package compiles its 1.7 MB WASM (see infra/bundle/libpg-query.ts).
 */
export const LATE_ALIASES: Readonly<Record<string, string>> = {
  'libpg-query': './infra/bundle/libpg-query.ts',
};

/**
 * Node builtins as CommonJS shims (infra/bundle/node-*.cjs, `process.getBuiltinModule`). An ESM import of a
 * builtin goes through its ESM facade, which reads every export once: for `node:crypto` that initialises WebCrypto,
 * for `node:process` the diagnostic report, for `node:http` undici's fetch and WebSocket (tens of milliseconds
 * together). ESM imports are also hoisted to the start of the bundle, so builtins needed only by code that may never
 * run (the SDK's HTTP/2 handler, the shared-ini loader…) would load at cold start; a shim loads when the module
 * needing it first runs, and exposes the module object without reading it.
 */
export const LAZY_BUILTINS = [
  'child_process',
  'crypto',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'process',
  'stream',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'timers',
  'tls',
  'util',
  'worker_threads',
  'zlib',
] as const;

export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  ...SDK_ALIASES,
  ...ZOD_ALIAS,
  ...LATE_ALIASES,
  ...Object.fromEntries(
    LAZY_BUILTINS.flatMap((name) => {
      const shim = `./infra/bundle/node-${name.replace('/', '-')}.cjs`;
      return [
        [`node:${name}`, shim],
        [name, shim],
      ];
    }),
  ),
};

/**
 * ESM output still meets CommonJS-flavoured code: require() calls, and Emscripten glue (libpg-query's WASM loader)
 * that finds its .wasm file through __dirname. Give them both, pointing at the bundle's directory.
 */
export const ESM_REQUIRE_BANNER = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  "import { dirname as __bundleDirname } from 'node:path';",
  'const require = __bundleCreateRequire(import.meta.url);',
  'const __filename = __bundleFileURLToPath(import.meta.url);',
  'const __dirname = __bundleDirname(__filename);',
].join(' ');

/**
 * Files a bundle loads from its own directory at run time: copied next to index.mjs when the bundle names them
 * (paths relative to the project root). libpg-query's parser (the query proxy's first layer) is 1.7 MB of WASM, so
 * only the functions that use it carry it.
 */
export const RUNTIME_ASSETS: ReadonlyArray<{ name: string; from: string }> = [
  { name: 'libpg-query.wasm', from: 'node_modules/libpg-query/wasm/libpg-query.wasm' },
];

export function copyRuntimeAssets(inputDir: string, outputDir: string): string[] {
  return RUNTIME_ASSETS.map(
    ({ name, from }) =>
      `if grep -qs "${name}" "${outputDir}"/*.mjs; then cp "${inputDir}/${from}" "${outputDir}/${name}"; fi`,
  );
}

export const TARGET = 'node24';

/** The bundle's files: index.mjs (the handler) and the chunks it imports, statically or with `import()`. */
export const ENTRY_FILE = 'index.mjs';
export const CHUNK_FILE = /^chunk-[A-Z0-9]+\.mjs$/;

export interface BundlingChoices {
  /** The function's source file (absolute path). */
  entry: string;
  /** Where the bundling step's options are written: the cloud assembly directory. */
  stagingDir: string;
  /** Source maps next to the bundle (on for deployments; the benchmark measures without). */
  sourceMap?: boolean;
  /**
   * Bundle the node-postgres driver too, for `sam local start-api` against a local PostgreSQL (`-c samLocal=true`).
   * Off for deployments: Lambda only talks to Aurora through the Data API.
   */
  includePostgresDriver?: boolean;
  /** Shell commands run after esbuild, e.g. copying the config and migrations into the bundle. */
  afterBundling?: (inputDir: string, outputDir: string) => string[];
  /**
   * A module standing in for `#shared/routes.ts` (absolute path): the area table of the function's rows, see
   * infra/route-tables.ts. Without it the bundle carries the whole route table.
   */
  routeTableModule?: string;
}

/** What infra/bundle/split.ts gives esbuild (JSON: esbuild's BuildOptions, without the output directory). */
export interface SplitBuild {
  entry: string;
  absWorkingDir: string;
  options: Record<string, unknown>;
}

/**
 * esbuild's options for a function: ESM for Node 24, minified, the SDK bundled (pinned by package-lock.json), the
 * local drivers left out, the aliases above, and code splitting: every `import()` becomes a chunk of its own that
 * loads when that import first runs. The handler's static imports (its route, middy, its domain code) load with the
 * function; the runtime (config, Secrets Manager, the Data API client) and the authenticators load at the first
 * invocation, where shared/http/handler.ts imports them.
 */
export function esbuildOptions(choices: BundlingChoices, projectRoot: string): SplitBuild {
  const external: string[] = choices.includePostgresDriver
    ? ['@electric-sql/pglite', 'drizzle-orm/pglite', 'pg-native']
    : [...LOCAL_DRIVER_MODULES];
  return {
    entry: choices.entry,
    absWorkingDir: projectRoot,
    options: {
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: TARGET,
      entryNames: 'index',
      // Next to index.mjs: code that finds files through __dirname (libpg-query's WASM) finds them from any chunk.
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
      // ESM builds of the SDK and drizzle (the `module` field) tree-shake; their CommonJS `main` builds do not.
      mainFields: ['module', 'main'],
      banner: { js: ESM_REQUIRE_BANNER },
      minify: true,
      sourcemap: choices.sourceMap ?? true,
      // The mappings only: the sources are in the repository, and the maps stay a quarter of the size.
      sourcesContent: false,
      external,
      alias: {
        ...BUNDLE_ALIASES,
        ...(choices.routeTableModule ? { '#shared/routes.ts': choices.routeTableModule } : {}),
      },
      legalComments: 'none',
      // Annotations (`sideEffects: false`, `/* @__PURE__ */`) are honoured: they drop zod's unused schema classes
      // and drizzle's unused column types. (Without code splitting they had to be ignored: a module reached by a
      // dynamic import was wrapped for lazy init, and esbuild, trusting drizzle's `sideEffects: false`, skipped that
      // init for static importers, so a module-level `sql.raw(...)` ran before sql.js had attached `raw`. Chunks
      // are plain ES modules, evaluated in import order; test/infra/bundles.test.ts loads and calls every bundle.)
      ignoreAnnotations: false,
      logLevel: 'warning',
    },
  };
}

/**
 * NodejsFunction bundling for a function. NodejsFunction runs esbuild with one `--outfile`, which cannot split
 * code, so its own run only compiles the entry (`--external:*`, a few milliseconds) and the afterBundling hook
 * builds the function with the options above (infra/bundle/split.ts, replacing that output), then copies the runtime
 * assets and whatever the caller adds (config, migrations).
 */
export function lambdaBundling(choices: BundlingChoices): BundlingOptions {
  const projectRoot = join(import.meta.dirname, '..');
  const split = esbuildOptions(choices, projectRoot);
  const text = `${JSON.stringify(split, null, 2)}\n`;
  const dir = join(choices.stagingDir, 'lambda-bundling');
  mkdirSync(dir, { recursive: true });
  const optionsFile = join(dir, `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
  writeFileSync(optionsFile, text);
  const splitScript = join(projectRoot, 'infra', 'bundle', 'split.ts');
  const commandHooks: ICommandHooks = {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      `"${process.execPath}" "${splitScript}" "${optionsFile}" "${outputDir}"`,
      ...copyRuntimeAssets(inputDir, outputDir),
      ...(choices.afterBundling?.(inputDir, outputDir) ?? []),
    ],
  };
  return {
    format: OutputFormat.ESM,
    target: TARGET,
    minify: true,
    sourceMap: choices.sourceMap ?? true,
    sourcesContent: false,
    // The pinned SDK versions of package-lock.json, not whatever the runtime ships (bundled by the split step).
    bundleAwsSDK: true,
    externalModules: (split.options.external as string[]) ?? [],
    forceDockerBundling: false,
    esbuildArgs: { '--external:*': true },
    commandHooks,
  };
}
