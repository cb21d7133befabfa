// The bundling step of every function (run by the afterBundling hook of its NodejsFunction, see
// infra/bundling.ts): esbuild with code splitting, which NodejsFunction's own single `--outfile` run cannot do.
//   node infra/bundle/split.ts <options.json> <output directory>
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import type { SplitBuild } from '../bundling.ts';

const [optionsFile, outdir] = process.argv.slice(2);
if (!optionsFile || !outdir) throw new Error('usage: split.ts <options.json> <output directory>');
const { entry, absWorkingDir, options } = JSON.parse(readFileSync(optionsFile, 'utf8')) as SplitBuild;

// NodejsFunction's run left index.mjs (the entry alone, every import external); the split build replaces it.
for (const file of readdirSync(outdir)) {
  if (/\.mjs(\.map)?$/.test(file)) rmSync(join(outdir, file));
}
await build({ ...(options as BuildOptions), entryPoints: { index: entry }, absWorkingDir, outdir });
