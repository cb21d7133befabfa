// How every Lambda is bundled (the stack's NodejsFunctions and the bundle benchmark use these same settings).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BundlingOptions, ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { projectImports } from './plan.ts';
import { takesBearerToken } from './route-tables.ts';

/**
 * Drivers Lambda never loads: shared/core/db/connect.ts imports them with `await import(...)` only for the pglite: and
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
 * Each stand-in below stays because leaving it out breaks a goal (every bundle ≤ 450 KB in all, start load ≤ 2.5×
 * hello world); `npm run bench:bundle-stubs` rebuilds every function without each one and prints what it saves (the
 * figures quoted here: KB saved in all, median over the 48 functions of config/prod.toml, esbuild 0.28.2), and
 * test/infra/bundle-stubs.test.ts fails when the module or path one replaces disappears from its dependency.
 * A stand-in whose effect no goal needed was removed: the narrowed aws-jwt-verify (0 KB with auth.provider =
 * "local", 2.4 KB with "idp"). Where a note below says meta/openapi went over 450 KB without one, that was measured
 * before meta/openapi served the document built at synth time (infra/openapi-module.ts: 451 → 382 KB in all);
 * requests/query (447.6 KB) has been the largest function since, and bench:bundle-stubs says which it still needs.
 *
 * Parts of the pinned, bundled AWS SDK that Lambda never runs, replaced at bundle time (esbuild `alias`; paths are
 * relative to the project root, where esbuild runs):
 * - the default credential chain → environment credentials only (what Lambda provides): 111.6 KB;
 * - the event-stream codec → a stub (no operation we call streams): 15.4 KB, meta/openapi over 450 KB without;
 * - bowser, the browser user-agent parser of the SDK's browser user-agent provider → a stub (never runs in Node):
 *   33.1 KB;
 * - Secrets Manager → its client and GetSecretValue only: shared/core/config/secrets.ts loads the package with
 *   `import()`, which esbuild cannot tree-shake, so the namespace is narrowed to what it uses: 14.2 KB.
 */
export const SDK_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './infra/bundle/credential-provider-env.ts',
  '@smithy/core/event-streams': './infra/bundle/no-event-streams.ts',
  bowser: './infra/bundle/no-bowser.ts',
  '@aws-sdk/client-secrets-manager': './infra/bundle/client-secrets-manager.mjs',
};

/**
 * The TOML parser → a stub: each function's config is bundled as JSON (config.json, see
 * infra/constructs/functions.ts), which loadConfig reads with JSON.parse: 10.8 KB (meta/openapi over 450 KB without).
 */
export const CONFIG_ALIASES: Readonly<Record<string, string>> = {
  'smol-toml': './infra/bundle/no-toml.ts',
};

/**
 * libpg-query (the query proxy's SQL parser) loaded by its `loadModule()` rather than on import: importing the
 * package compiles its 1.7 MB WASM (see infra/bundle/libpg-query.ts). Without it, requests/query's start grows by
 * 42.4 KB and its start load went from 2.55× to 3.79× hello world (npm run bench:bundles).
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
 * needing it first runs, and exposes the module object without reading it. Measured with the shims left out
 * (bench:bundles, six functions, 10 runs each): start load 2.49× → 3.00× hello world at the median, every one past
 * 2.5×; they cost 0.9 KB of start.
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
  // Its own entry: an alias of 'util' alone would also rewrite 'util/types' (node-postgres) to a path under the shim.
  'util/types',
  'worker_threads',
  'zlib',
] as const;

/**
 * Files a package imports from itself that Lambda never runs. esbuild's `alias` only rewrites package names, not a
 * package's relative imports, so a plugin of infra/bundle/split.ts loads `stub` instead of `module` where `importer`
 * imports it (paths relative to the project root; keyed by importer, so a stub can still use the real module):
 * - zod's JSON Schema generator, wired into every schema instance: only `z.toJSONSchema` (GET /v1/openapi.json)
 *   generates JSON Schema, and it brings the generator itself (infra/bundle/zod-json-schema-processors.ts): 9.3 and
 *   8.2 KB of every function's start, which its start load pays;
 * - drizzle's table of every PostgreSQL column type, for the callback form of `pgTable` columns, which
 *   shared/core/db/schema.ts does not use: 12.9 KB of start (meta/openapi over 450 KB without);
 * - @smithy/core's pure-JavaScript SHA-256, the fallback for a `node:crypto` without sha256: 3.1 KB (meta/openapi
 *   over 450 KB without);
 * - @smithy/core's region lookup in the EC2 instance metadata service, asked only without AWS_REGION (which Lambda
 *   always sets), 1.3 KB; its S3 endpoint customizations, run only for an S3 client (kept where there is one: the
 *   event archive), 0.6 KB; its stream mixin for web ReadableStream bodies, which the SDK's Node HTTP handler never
 *   returns, 2.0 KB. Each is small, but without the three meta/openapi measured 453.2 KB in all (bench:bundles), past
 *   the goal.
 */
export interface InternalStub {
  importer: string;
  module: string;
  stub: string;
}

/** @smithy/core's S3 endpoint customizations (see INTERNAL_STUBS): kept in the one function with an S3 client. */
export const S3_CUSTOMIZATIONS_STUB: InternalStub = {
  importer:
    'node_modules/@smithy/core/dist-es/submodules/endpoints/middleware-endpoint/service-customizations/index.js',
  module:
    'node_modules/@smithy/core/dist-es/submodules/endpoints/middleware-endpoint/service-customizations/s3.js',
  stub: 'infra/bundle/no-s3-customizations.mjs',
};

/** The module holding the service's one S3 client: the object store of the event archive and the audit anchors. */
export const S3_CLIENT_MODULE = 'shared/core/object-store/s3-store.ts';

export const INTERNAL_STUBS: readonly InternalStub[] = [
  {
    importer: 'node_modules/zod/v4/classic/schemas.js',
    module: 'node_modules/zod/v4/core/json-schema-processors.js',
    stub: 'infra/bundle/zod-json-schema-processors.ts',
  },
  {
    importer: 'node_modules/zod/v4/classic/schemas.js',
    module: 'node_modules/zod/v4/core/to-json-schema.js',
    stub: 'infra/bundle/zod-to-json-schema.ts',
  },
  {
    importer: 'node_modules/drizzle-orm/pg-core/table.js',
    module: 'node_modules/drizzle-orm/pg-core/columns/all.js',
    stub: 'infra/bundle/drizzle-pg-column-builders.ts',
  },
  {
    importer: 'node_modules/@smithy/core/dist-es/submodules/checksum/sha256/Sha256Node.js',
    module: 'node_modules/@smithy/core/dist-es/submodules/checksum/sha256/Sha256Js.js',
    stub: 'infra/bundle/no-sha256-js.ts',
  },
  ...[
    'node_modules/@smithy/core/dist-es/submodules/config/config-resolver/regionConfig/config.js',
    'node_modules/@smithy/core/dist-es/submodules/config/defaults-mode/resolveDefaultsModeConfig.js',
  ].map((importer) => ({
    importer,
    module:
      'node_modules/@smithy/core/dist-es/submodules/config/config-resolver/regionConfig/getInstanceMetadataRegion.js',
    stub: 'infra/bundle/no-imds-region.ts',
  })),
  S3_CUSTOMIZATIONS_STUB,
  {
    importer: 'node_modules/@smithy/core/dist-es/submodules/serde/util-stream/sdk-stream-mixin.js',
    module: 'node_modules/@smithy/core/dist-es/submodules/serde/util-stream/sdk-stream-mixin.browser.js',
    stub: 'infra/bundle/no-web-stream-mixin.ts',
  },
];

/**
 * For the functions none of whose route rows takes a bearer token (public and device-signed routes): the token
 * authenticators (the local tokens' jose, the OIDC verifier) and the caller's lookup in the users table, which
 * shared/core/http/middleware/bearer-auth.ts loads with `import()` only for such rows.
 */
export const TOKEN_AUTHENTICATOR_STUB: InternalStub = {
  importer: 'shared/core/http/middleware/bearer-auth.ts',
  module: 'shared/core/auth/caller.ts',
  stub: 'infra/bundle/no-token-authenticator.ts',
};

/**
 * What of the deployment's config decides what the bundles leave out: the stack knows it at synth, and each function
 * reads that very config (bundled as config.json, see infra/constructs/functions.ts).
 */
export interface DeploymentChoices {
  /** auth.provider: with "local" no token goes to an IdP. */
  authProvider: 'local' | 'idp';
  /** envsvc.provider: the environments are provisioned in the service's own database, or by an external service. */
  envProvider: 'builtin' | 'http';
}

/**
 * With auth.provider = "local": the IdP token check (shared/core/auth/idp-tokens.ts and the OIDC verifier, aws-jwt-verify),
 * which shared/core/auth/authenticate.ts calls only in idp mode. Local tokens (HS256) stay: they are the tokens of local mode.
 */
export const IDP_VERIFIER_STUB: InternalStub = {
  importer: 'shared/core/auth/authenticate.ts',
  module: 'shared/core/auth/idp-tokens.ts',
  stub: 'infra/bundle/no-idp-tokens.ts',
};

/** With envsvc.provider = "builtin": the client of an external environment service, which providerFor never builds. */
export const HTTP_ENVIRONMENTS_STUB: InternalStub = {
  importer: 'shared/requests/environments.ts',
  module: 'shared/requests/environments/http.ts',
  stub: 'infra/bundle/no-http-environments.ts',
};

/**
 * With envsvc.provider = "http": the builtin provider (views, roles, sessions per driver), which providerFor never
 * builds. Only where shared/requests/environments.ts imports it (shared/requests/environments/builtin/provider.ts): the query proxy and the
 * lifecycle import the few parts of environments/builtin/ they use directly, and keep them.
 */
export const BUILTIN_ENVIRONMENTS_STUB: InternalStub = {
  importer: 'shared/requests/environments.ts',
  module: 'shared/requests/environments/builtin/provider.ts',
  stub: 'infra/bundle/no-builtin-environments.ts',
};

/** The stubs the deployment's config allows (none without one: every provider is then bundled). */
export function configStubsFor(deployment: DeploymentChoices | undefined): InternalStub[] {
  if (!deployment) return [];
  return [
    ...(deployment.authProvider === 'local' ? [IDP_VERIFIER_STUB] : []),
    deployment.envProvider === 'builtin' ? HTTP_ENVIRONMENTS_STUB : BUILTIN_ENVIRONMENTS_STUB,
  ];
}

/** The internal stubs of the function whose source is `entry`, for the deployment's config when given. */
export function internalStubsFor(
  entry: string,
  projectRoot: string,
  deployment?: DeploymentChoices,
): InternalStub[] {
  const s3 = projectImports(entry, projectRoot).has(join(projectRoot, S3_CLIENT_MODULE));
  return [
    ...INTERNAL_STUBS.filter((stub) => !(s3 && stub === S3_CUSTOMIZATIONS_STUB)),
    ...(takesBearerToken(entry, projectRoot) ? [] : [TOKEN_AUTHENTICATOR_STUB]),
    ...configStubsFor(deployment),
  ];
}

export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  ...SDK_ALIASES,
  ...CONFIG_ALIASES,
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
 * ESM output still meets CommonJS-flavoured code: require() calls (esbuild's helper for a CommonJS `require` of a
 * module it does not bundle reads a global `require`), and Emscripten glue (libpg-query's WASM loader) that finds
 * its .wasm file through __dirname. `require` comes from this banner, which infra/bundle/split.ts puts at the top of
 * the files whose code may read it (READS_REQUIRE); __dirname and __filename are replaced where they are read
 * (CJS_PATH_DEFINES). A bundle is twenty-odd files, and few read any of them: a banner with all three in every file
 * cost ~7 KB per function.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);";

/**
 * Whether an output file may read the global `require`: any mention of the word (strings and comments included, so
 * that a false positive only costs the banner; a global is never renamed by the minifier).
 */
export const READS_REQUIRE = /\brequire\b/;

/** __dirname and __filename of the file that reads them (every file of a bundle is in the bundle's directory). */
export const CJS_PATH_DEFINES: Readonly<Record<string, string>> = {
  __dirname: 'import.meta.dirname',
  __filename: 'import.meta.filename',
};

/**
 * Files a bundle loads from its own directory at run time: copied next to index.mjs when the bundle names them
 * (paths relative to the project root). libpg-query's parser (the query proxy's first layer) is 1.7 MB of WASM, so
 * only the functions that use it carry it; likewise Redoc's script, only the API reference.
 */
export const RUNTIME_ASSETS: ReadonlyArray<{ name: string; from: string }> = [
  { name: 'libpg-query.wasm', from: 'node_modules/libpg-query/wasm/libpg-query.wasm' },
  // The API reference page's script (functions/meta/api-reference.ts), 1.1 MB.
  { name: 'redoc.standalone.js', from: 'node_modules/redoc/bundles/redoc.standalone.js' },
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
   * Generated modules standing in for project modules in this bundle (specifier → absolute path; generatedModules
   * in infra/generated-modules.ts): the function's own route table, the OpenAPI document built at synth time.
   * Without them the bundle carries the whole route table and builds the document at run time.
   */
  modules?: Readonly<Record<string, string>>;
  /**
   * The providers the deployment's config picks (auth.provider, envsvc.provider): the ones it does not pick are left
   * out of the bundle (configStubsFor). Without it every provider is bundled.
   */
  deployment?: DeploymentChoices;
}

/**
 * package.json files bundled for their version alone (a regular expression on the path): each SDK client imports
 * its whole package.json (2 KB) for `version`, which goes into the user agent.
 */
export const VERSION_ONLY_PACKAGE_JSON = String.raw`/node_modules/@aws-sdk/client-[^/]+/package\.json$`;

/**
 * The SDK clients' schema modules (a regular expression on the path), whose object keys are rewritten from
 * `[_name]:` to the string that `const _name = "…"` holds. Each client's schemas_0.js declares every shape of its
 * service as a top-level array, with traits as objects under computed keys (`{ [_hH]: _xacsa }`); esbuild keeps any
 * object literal with a computed key that is not a literal (evaluating the key could run code), and with it every
 * shape that one references, so the whole module was bundled whatever the function sends. With string keys (the
 * same objects), esbuild keeps the shapes of the commands a function imports and the service's error shapes (every
 * error is registered at load): in the event archive (PutObject, GetObject) @aws-sdk/client-s3's schemas went from
 * 64.1 KB to 10.3 KB
 * (observability/archive: 570.0 → 514.7 KB in all); the Data API's and Secrets Manager's shrink in every function.
 */
export const SDK_SCHEMA_MODULES = String.raw`/node_modules/@aws-sdk/client-[^/]+/dist-es/schemas/schemas_\d+\.js$`;

/**
 * Text replaced in a package's file as esbuild loads it (a plugin of infra/bundle/split.ts; paths relative to the
 * project root), where the package's code defeats tree-shaking and the replacement is the same code. Each `from`
 * must occur in the file: test/infra/bundle-stubs.test.ts fails when an update moves it.
 * - zod's classic schemas read one helper as `core.util.constantCatch`, through the namespace that core/index.js
 *   re-exports, and import `util` by name from there: esbuild then builds util.js's namespace object, with every one
 *   of its ~75 exports. Reading util.js's namespace directly lets esbuild keep the helpers zod calls: 4.7 KB less in
 *   every function.
 */
export interface SourceRewrite {
  file: string;
  replace: ReadonlyArray<readonly [from: string, to: string]>;
}

export const SOURCE_REWRITES: readonly SourceRewrite[] = [
  {
    file: 'node_modules/zod/v4/classic/schemas.js',
    replace: [
      ['import { util } from "../core/index.js";', 'import * as util from "../core/util.js";'],
      ['core.util.constantCatch(', 'util.constantCatch('],
    ],
  },
];

/**
 * What infra/bundle/split.ts gives esbuild (JSON: esbuild's BuildOptions, without the output directory; and what
 * its plugins do: the internal stubs, the package.json files reduced to their version).
 */
export interface SplitBuild {
  entry: string;
  absWorkingDir: string;
  options: Record<string, unknown>;
  stubs: readonly InternalStub[];
  versionOnlyPackageJson: string;
  /** See SDK_SCHEMA_MODULES ('^$': none). */
  literalSchemaKeys: string;
  /** See SOURCE_REWRITES. */
  rewrites: readonly SourceRewrite[];
}

/**
 * esbuild's options for a function: ESM for Node 24, minified, the SDK bundled (pinned by package-lock.json), the
 * local drivers left out, the aliases above, and code splitting: every `import()` becomes a chunk of its own that
 * loads when that import first runs. The handler's static imports (its route, middy, its domain code) load with the
 * function; the runtime (config, Secrets Manager, the Data API client) and the authenticators load at the first
 * invocation, where the middlewares (shared/core/http/middleware/) import them.
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
      define: { ...CJS_PATH_DEFINES },
      minify: true,
      sourcemap: choices.sourceMap ?? true,
      // The mappings only: the sources are in the repository, and the maps stay a quarter of the size.
      sourcesContent: false,
      external,
      alias: {
        ...BUNDLE_ALIASES,
        ...choices.modules,
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
    stubs: internalStubsFor(choices.entry, projectRoot, choices.deployment),
    versionOnlyPackageJson: VERSION_ONLY_PACKAGE_JSON,
    literalSchemaKeys: SDK_SCHEMA_MODULES,
    rewrites: SOURCE_REWRITES,
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
