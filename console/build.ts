// How the admin console is built and what policy it is served under, in one place for both places that serve it: the
// local server (local-server/console.ts, built at the first request for /console/) and the stack
// (infra/constructs/console-site.ts, built at synth and copied to S3 behind CloudFront). esbuild is loaded only when a
// build runs, so neither `npm start` nor anything deployed loads it otherwise.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Metafile, OutputFile } from 'esbuild';

/** The path the console's pages live under, locally and behind CloudFront (console/src/router.ts has its twin). */
export const CONSOLE_PATH = '/console';
/** Where its built files are, below CONSOLE_PATH. */
export const CONSOLE_ASSETS = 'assets';
/**
 * The console's runtime settings beside its assets (`{"api_url": …}`), written by the stack, where the API is another
 * origin than the console. Absent locally (404): the console then calls the API at its own origin.
 */
export const CONSOLE_CONFIG_FILE = 'config.json';

const CONSOLE_DIR = fileURLToPath(new URL('.//', import.meta.url));

/**
 * Scripts and styles only from the console's origin, no inline script or style, API calls only to the console's
 * origin and to `apiSources` (the stack's API, another origin).
 */
export function consoleCsp(apiSources: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    ["connect-src 'self'", ...apiSources].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy the local server sends, where the API is the console's own origin. */
export const CONSOLE_CSP = consoleCsp();

/**
 * Caching, the same locally and behind CloudFront. Scripts and styles are named after their content, so a name never
 * changes meaning and browsers keep them for a year without asking; the page (and config.json) is never kept, so a
 * deploy shows at its next load.
 */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const PAGE_CACHE_CONTROL = 'no-store';

/** What index.html names; the build puts the content-hashed names in their place. */
const HTML_SCRIPT = `${CONSOLE_PATH}/${CONSOLE_ASSETS}/console.js`;
const HTML_STYLE = `${CONSOLE_PATH}/${CONSOLE_ASSETS}/console.css`;

export interface ConsoleBuild {
  /** Keyed by file name under /console/assets/: console-<hash>.js and console-<hash>.css. */
  assets: Map<string, { body: Uint8Array; contentType: string }>;
  /** index.html, naming the assets by their hashed names. */
  html: string;
  /** Bytes of each input in the script, by where it came from (esbuild's metafile). */
  scriptInputs: Record<string, number>;
}

/** console/src/main.tsx (Preact, the API client) and console.css: minified, one ES module, no source map. */
const OPTIONS = {
  entryPoints: { console: `${CONSOLE_DIR}src/main.tsx`, 'console-style': `${CONSOLE_DIR}console.css` },
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome120', 'firefox120', 'safari17'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: '/console-assets',
  write: false,
  legalComments: 'none',
  logLevel: 'silent',
  metafile: true,
} as const satisfies BuildOptions;

function collect(result: { outputFiles: OutputFile[]; metafile: Metafile }): ConsoleBuild {
  const assets: ConsoleBuild['assets'] = new Map();
  let html = readFileSync(`${CONSOLE_DIR}index.html`, 'utf8');
  const name = (path: string) => path.split('/').pop() as string;
  for (const file of result.outputFiles) {
    const script = /^console-([A-Z0-9]+)\.js$/.exec(name(file.path));
    const style = /^console-style-([A-Z0-9]+)\.css$/.exec(name(file.path));
    if (script) {
      assets.set(name(file.path), { body: file.contents, contentType: 'text/javascript; charset=utf-8' });
      html = named(html, HTML_SCRIPT, name(file.path));
    }
    if (style) {
      const hashed = `console-${style[1]}.css`;
      assets.set(hashed, { body: file.contents, contentType: 'text/css; charset=utf-8' });
      html = named(html, HTML_STYLE, hashed);
    }
  }
  const script = Object.entries(result.metafile.outputs).find(([path]) =>
    /\/console-[A-Z0-9]+\.js$/.test(path),
  );
  const scriptInputs: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(script?.[1].inputs ?? {})) {
    scriptInputs[input] = bytesInOutput;
  }
  return { assets, html, scriptInputs };
}

/** index.html with its reference to `placeholder` replaced by the hashed file's; it must have had one. */
function named(html: string, placeholder: string, hashed: string): string {
  if (!html.includes(`"${placeholder}"`))
    throw new Error(`console/index.html does not reference ${placeholder}`);
  return html.replace(`"${placeholder}"`, `"${CONSOLE_PATH}/${CONSOLE_ASSETS}/${hashed}"`);
}

/** The build, without blocking (the local server's first request for /console/, the benchmark). */
export async function buildConsole(): Promise<ConsoleBuild> {
  const { build } = await import('esbuild');
  return collect(await build(OPTIONS));
}

/** The same build, synchronously: CDK constructs are built in constructors (the stack, at synth; no network). */
export function buildConsoleSync(): ConsoleBuild {
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  return collect(buildSync(OPTIONS));
}

/**
 * The build as files at the keys a static host serves them under (console/index.html, console/assets/*), written
 * below `dir`; returns those keys. The stack copies such a directory to S3.
 */
export function writeConsoleFiles(build: ConsoleBuild, dir: string): string[] {
  const base = CONSOLE_PATH.slice(1);
  const files = new Map<string, Uint8Array | string>([[`${base}/index.html`, build.html]]);
  for (const [name, asset] of build.assets) files.set(`${base}/${CONSOLE_ASSETS}/${name}`, asset.body);
  for (const [key, body] of files) {
    mkdirSync(dirname(join(dir, key)), { recursive: true });
    writeFileSync(join(dir, key), body);
  }
  return [...files.keys()];
}
