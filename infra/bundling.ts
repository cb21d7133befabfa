// How every Lambda is bundled (the stack's NodejsFunctions and the bundle benchmark use these same settings).
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
 * Node builtins that bundled code imports at the top of modules it may never run (the SDK's HTTP/2 handler, the
 * CRC32 checksum, the shared-ini loader…). ESM imports of builtins are hoisted to the start of the bundle, so each
 * would load at cold start; as CommonJS shims (infra/bundle/node-*.cjs) they load when the module needing them first
 * runs. `node:http` matters most: its ESM facade reads the lazy fetch/WebSocket getters and loads undici.
 */
export const LAZY_BUILTINS = ['http', 'https', 'http2', 'zlib', 'fs/promises'] as const;

export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  ...SDK_ALIASES,
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
      `if grep -q "${name}" "${outputDir}/index.mjs"; then cp "${inputDir}/${from}" "${outputDir}/${name}"; fi`,
  );
}

export const TARGET = 'node24';

export interface BundlingChoices {
  /** Source maps next to the bundle (on for deployments; the benchmark measures without). */
  sourceMap?: boolean;
  /**
   * Bundle the node-postgres driver too, for `sam local start-api` against a local PostgreSQL (`-c samLocal=true`).
   * Off for deployments: Lambda only talks to Aurora through the Data API.
   */
  includePostgresDriver?: boolean;
  /** Shell commands run after esbuild, e.g. copying the config and migrations into the bundle. */
  afterBundling?: (inputDir: string, outputDir: string) => string[];
}

export function lambdaBundling(choices: BundlingChoices = {}): BundlingOptions {
  const externals: string[] = choices.includePostgresDriver
    ? ['@electric-sql/pglite', 'drizzle-orm/pglite', 'pg-native']
    : [...LOCAL_DRIVER_MODULES];
  const commandHooks: ICommandHooks = {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => [
      ...copyRuntimeAssets(inputDir, outputDir),
      ...(choices.afterBundling?.(inputDir, outputDir) ?? []),
    ],
  };
  return {
    format: OutputFormat.ESM,
    target: TARGET,
    // ESM builds of the SDK and drizzle (the `module` field) tree-shake; their CommonJS `main` builds do not.
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_BANNER,
    minify: true,
    sourceMap: choices.sourceMap ?? true,
    // The mappings only: the sources are in the repository, and the map stays a quarter of the size.
    sourcesContent: false,
    // The pinned SDK versions of package-lock.json, not whatever the runtime ships.
    bundleAwsSDK: true,
    externalModules: externals,
    forceDockerBundling: false,
    esbuildArgs: {
      '--alias': Object.entries(BUNDLE_ALIASES).map(([from, to]) => `${from}=${to}`),
      '--legal-comments': 'none',
      // drizzle-orm says `sideEffects: false`, yet sql.js attaches sql.raw / sql.join / … in a module-level
      // statement. Once connect.ts reaches that module through a dynamic import, esbuild wraps it for lazy init and,
      // trusting the flag, skips the init call in static importers: a module-level `sql.raw(...)` then throws
      // "sql.raw is not a function" at cold start. Ignoring the flags costs ~11 KB and keeps ESM evaluation order.
      '--ignore-annotations': true,
    },
    commandHooks,
  };
}
