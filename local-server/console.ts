// The admin console (console/) as the local server serves it under /console/: index.html for every page path (the
// console routes in the browser), and the script and stylesheet esbuild makes from console/src. Its page
// /console/cli/login is the dashboard's part of the agent's browser sign-in: config/local.toml points dashboard_url
// at /console. The build runs at
// the first request for the console, not at start, so `npm start` is no slower; it is kept in memory.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const CONSOLE_PATH = '/console';
const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/** Scripts and styles only from this origin, no inline script or style, API calls only to this origin. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleBuild {
  /** Keyed by file name under /console/assets/. */
  assets: Map<string, { body: Uint8Array; contentType: string }>;
  html: string;
  /** Bytes of each input in the script, by where it came from (esbuild's metafile). */
  scriptInputs: Record<string, number>;
}

/** Bundles console/src/main.tsx (Preact, the API client) and console.css: minified, one ES module, no source map. */
export async function buildConsole(): Promise<ConsoleBuild> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { console: `${CONSOLE_DIR}src/main.tsx`, 'console-style': `${CONSOLE_DIR}console.css` },
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
  });
  const assets: ConsoleBuild['assets'] = new Map();
  for (const file of result.outputFiles) {
    const name = file.path.split('/').pop() as string;
    if (name === 'console.js')
      assets.set(name, { body: file.contents, contentType: 'text/javascript; charset=utf-8' });
    if (name === 'console-style.css')
      assets.set('console.css', { body: file.contents, contentType: 'text/css; charset=utf-8' });
  }
  const script = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith('/console.js'));
  const scriptInputs: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(script?.[1].inputs ?? {})) {
    scriptInputs[input] = bytesInOutput;
  }
  return { assets, html: await readFile(`${CONSOLE_DIR}index.html`, 'utf8'), scriptInputs };
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A dashboard URL that is this server's own console on loopback follows the port the server listens on: with
 * `npm start -- --port 9000` the agent's browser must be sent to port 9000, not to the 8080 of config/local.toml. Any
 * other URL (a dashboard elsewhere) is left as it is, and so is every URL when the port is 0 (chosen by the system).
 */
export function consoleDashboardOnPort(dashboardUrl: string, port: number): string {
  if (port <= 0) return dashboardUrl;
  const url = new URL(dashboardUrl);
  const ownPage = url.pathname === CONSOLE_PATH || url.pathname.startsWith(`${CONSOLE_PATH}/`);
  if (!LOOPBACK_HOSTS.has(url.hostname) || !ownPage || url.port === String(port)) return dashboardUrl;
  url.port = String(port);
  return url.toString();
}

let built: Promise<ConsoleBuild> | undefined;

export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The answer to GET `path` under /console: status, headers, body. */
export async function consoleResponse(
  path: string,
): Promise<{ status: number; headers: Record<string, string>; body: string | Uint8Array }> {
  if (path === CONSOLE_PATH) {
    return { status: 308, headers: { location: `${CONSOLE_PATH}/`, ...SECURITY_HEADERS }, body: '' };
  }
  built ??= buildConsole().catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  const { assets, html } = await built;
  const assetPrefix = `${CONSOLE_PATH}/assets/`;
  if (path.startsWith(assetPrefix)) {
    const asset = assets.get(path.slice(assetPrefix.length));
    if (!asset) {
      return {
        status: 404,
        headers: { 'content-type': 'application/json', ...SECURITY_HEADERS },
        body: JSON.stringify({ error: 'not_found', message: `No console asset at ${path}.` }),
      };
    }
    return {
      status: 200,
      headers: { 'content-type': asset.contentType, ...SECURITY_HEADERS },
      body: asset.body,
    };
  }
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS },
    body: html,
  };
}
