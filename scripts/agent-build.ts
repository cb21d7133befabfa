// npm run agent:build: the endpoint agent as one file that Node ≥ 20 runs (dist/agent/acp-agent.cjs, executable,
// with a shebang): what an MDM copies to 500 laptops. Its version is fixed at build time (AGENT_VERSION, default
// package.json's), so that `acp-agent --version` and the inventory say which build a laptop runs. The hook starts it
// on every tool call, so it is built for start-up time: CommonJS (Node's ES module loader alone costs more than
// Node's own start), minified, no source map inside, each command's modules evaluated only when it runs, and the hook
// dispatched before the CLI's own start (agent/bin.ts).
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: { outfile: { type: 'string', default: join(ROOT, 'dist', 'agent', 'acp-agent.cjs') } },
});
const outfile = resolve(values.outfile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const version = process.env.AGENT_VERSION || pkg.version;
if (!/^[0-9A-Za-z.+-]{1,64}$/.test(version))
  throw new Error(`AGENT_VERSION ${JSON.stringify(version)} is not a version`);

/** agent/version.ts becomes the build's version, whatever that module reads at run time. */
const fixedVersion: Plugin = {
  name: 'agent-version',
  setup(b) {
    b.onLoad({ filter: /[\\/]agent[\\/]version\.ts$/ }, () => ({
      contents: `export const AGENT_VERSION = ${JSON.stringify(version)};`,
      loader: 'ts',
    }));
  },
};

const result = await build({
  entryPoints: [join(ROOT, 'agent', 'bin.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  // The ES module build of a package first: a UMD build's require() of its own files is not seen by the bundler.
  mainFields: ['module', 'main'],
  target: 'node20',
  format: 'cjs',
  define: { 'import.meta.url': '__acpUrl' },
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  plugins: [fixedVersion],
  banner: {
    js: [
      '#!/usr/bin/env node',
      // What import.meta.url says in the sources. (No module.enableCompileCache: it caches only the modules loaded
      // after it, and this file is compiled before it runs, so it would cost a directory and a hash per run.)
      'const __acpUrl=require("node:url").pathToFileURL(__filename).href;',
    ].join('\n'),
  },
});
chmodSync(outfile, 0o755);
const inputs = Object.keys(result.metafile.inputs).length;
process.stdout.write(
  `Built ${relative(process.cwd(), outfile)} (agent ${version}): ${(statSync(outfile).size / 1024).toFixed(1)} KB from ${inputs} modules\n`,
);
