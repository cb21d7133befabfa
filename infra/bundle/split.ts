// The bundling step of every function (run by the afterBundling hook of its NodejsFunction, see
// infra/bundling.ts): esbuild with code splitting, which NodejsFunction's own single `--outfile` run cannot do.
//   node infra/bundle/split.ts <options.json> <output directory>
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { type BuildOptions, build, type OutputFile, type Plugin } from 'esbuild';
import { type InternalStub, READS_REQUIRE, type SourceRewrite, type SplitBuild } from '../bundling.ts';

/**
 * Loads each stub's file where its importer imports its module (a relative import inside a package, which esbuild's
 * `alias` cannot rewrite). Only imports whose last path segment names a stubbed module reach the callback.
 */
export function internalStubsPlugin(stubs: readonly InternalStub[], root: string): Plugin {
  const byImport = new Map(stubs.map((s) => [`${join(root, s.importer)}\n${join(root, s.module)}`, s]));
  const names = [...new Set(stubs.map((s) => basename(s.module).replace(/\.js$/, '')))];
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'));
  const filter = new RegExp(`^\\..*/(?:${escaped.join('|')})(?:\\.js)?$`);
  return {
    name: 'internal-stubs',
    setup(esbuild) {
      esbuild.onResolve({ filter }, (args) => {
        const target = resolve(args.resolveDir, args.path);
        const stub =
          byImport.get(`${args.importer}\n${target}`) ?? byImport.get(`${args.importer}\n${target}.js`);
        return stub ? { path: join(root, stub.stub) } : undefined;
      });
    },
  };
}

/** Loads the package.json files whose path matches `pattern` as `{ "version": … }` alone. */
export function versionOnlyPlugin(pattern: string): Plugin {
  return {
    name: 'version-only-package-json',
    setup(esbuild) {
      esbuild.onLoad({ filter: new RegExp(pattern) }, (args) => {
        const { version } = JSON.parse(readFileSync(args.path, 'utf8')) as { version: string };
        return { contents: JSON.stringify({ version }), loader: 'json' };
      });
    },
  };
}

/**
 * In the modules whose path matches `pattern` (SDK_SCHEMA_MODULES), object keys written `[_name]:` where the module
 * declares `const _name = "…";` become that string literal, which lets esbuild drop the objects no one references.
 * A computed key naming anything else stays as it is.
 */
export function literalSchemaKeys(text: string): string {
  const strings = new Map(
    [...text.matchAll(/^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm)].map((m) => [m[1]!, m[2]!]),
  );
  return text.replace(/\[(_\w+)\]:/g, (key, name: string) => {
    const value = strings.get(name);
    return value === undefined ? key : `${value}:`;
  });
}

export function literalSchemaKeysPlugin(pattern: string): Plugin {
  return {
    name: 'literal-schema-keys',
    setup(esbuild) {
      esbuild.onLoad({ filter: new RegExp(pattern) }, (args) => ({
        contents: literalSchemaKeys(readFileSync(args.path, 'utf8')),
        loader: 'js',
      }));
    },
  };
}

/** Applies each rewrite's replacements to its file as esbuild loads it (see SOURCE_REWRITES). */
export function sourceRewritesPlugin(rewrites: readonly SourceRewrite[], root: string): Plugin {
  const byPath = new Map(rewrites.map((rewrite) => [join(root, rewrite.file), rewrite]));
  return {
    name: 'source-rewrites',
    setup(esbuild) {
      if (byPath.size === 0) return;
      const names = [...new Set(rewrites.map((r) => basename(r.file)))].map((n) =>
        n.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'),
      );
      esbuild.onLoad({ filter: new RegExp(`/(?:${names.join('|')})$`) }, (args) => {
        const rewrite = byPath.get(args.path);
        if (!rewrite) return undefined;
        let text = readFileSync(args.path, 'utf8');
        for (const [from, to] of rewrite.replace) text = text.replaceAll(from, to);
        return { contents: text, loader: 'js' };
      });
    },
  };
}

/**
 * Writes the output files, the banner (ESM_REQUIRE_BANNER, one line) at the top of those whose code may read the
 * global `require` (READS_REQUIRE) and nowhere else, as esbuild's own `banner` would: followed by a newline, and the
 * source map shifted by that line.
 */
export function writeOutputs(files: readonly OutputFile[], banner: string | undefined): void {
  const withBanner = new Set(
    files
      .filter((file) => banner && file.path.endsWith('.mjs') && READS_REQUIRE.test(file.text))
      .map((file) => file.path),
  );
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    if (withBanner.has(file.path)) {
      writeFileSync(file.path, `${banner}\n${file.text}`);
    } else if (withBanner.has(file.path.replace(/\.map$/, ''))) {
      const map = JSON.parse(file.text) as { mappings: string };
      writeFileSync(file.path, JSON.stringify({ ...map, mappings: `;${map.mappings}` }));
    } else {
      writeFileSync(file.path, file.contents);
    }
  }
}

/** Builds a function into `outdir` as the stack does (`extra`: e.g. a metafile, for the analyses of the tests). */
export async function buildSplit(split: SplitBuild, outdir: string, extra?: BuildOptions) {
  const {
    entry,
    absWorkingDir,
    options,
    stubs,
    versionOnlyPackageJson,
    literalSchemaKeys: schemaModules,
    rewrites,
  } = split;
  // The banner goes only where it is read (writeOutputs): in every file it would cost ~120 bytes each.
  const { banner, ...rest } = options as BuildOptions;
  const result = await build({
    ...rest,
    entryPoints: { index: entry },
    absWorkingDir,
    outdir,
    plugins: [
      internalStubsPlugin(stubs, absWorkingDir),
      versionOnlyPlugin(versionOnlyPackageJson),
      literalSchemaKeysPlugin(schemaModules),
      sourceRewritesPlugin(rewrites, absWorkingDir),
    ],
    ...extra,
    write: false,
  });
  writeOutputs(result.outputFiles, banner?.js);
  return result;
}

if (import.meta.main) {
  const [optionsFile, outdir] = process.argv.slice(2);
  if (!optionsFile || !outdir) throw new Error('usage: split.ts <options.json> <output directory>');
  // NodejsFunction's run left index.mjs (the entry alone, every import external); the split build replaces it.
  for (const file of readdirSync(outdir)) {
    if (/\.mjs(\.map)?$/.test(file)) rmSync(join(outdir, file));
  }
  await buildSplit(JSON.parse(readFileSync(optionsFile, 'utf8')) as SplitBuild, outdir);
}
