// The admin console (console/) as the local server serves it under /console/: index.html for every page path (the
// console routes in the browser), and the script and stylesheet esbuild makes from console/src. Its page
// /console/cli/login is the dashboard's part of the agent's browser sign-in: config/local.toml points dashboard_url
// at /console. The build (console/build.ts, the stack's too) runs at the first request for the console, not at start,
// so `npm start` is no slower; it is kept in memory. That is for development: the stack builds the console at synth
// and serves files from S3, so nothing deployed runs esbuild.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import {
  ASSET_CACHE_CONTROL,
  buildConsole,
  CONSOLE_ASSETS,
  CONSOLE_CONFIG_FILE,
  CONSOLE_PATH,
  type ConsoleBuild,
  consoleCsp,
  PAGE_CACHE_CONTROL,
} from '#console/build.ts';
import { consoleConnectSources, consoleSettings } from '#console/settings.ts';
import type { Config } from '#shared/core/config/schema.ts';

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

/** The console's policy: its API is this origin; the IdP's origin is added when it signs in through one. */
const securityHeaders = (config: Config) => ({
  'content-security-policy': consoleCsp(consoleConnectSources(config)),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

type Encoding = 'br' | 'gzip';

/** The encoding to send, from Accept-Encoding: brotli, else gzip, else none; one refused with q=0 is not used. */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  const accepted = new Set<string>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [coding, ...params] = part.split(';').map((p) => p.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (coding && !(q && Number(q.slice(2)) === 0)) accepted.add(coding);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return undefined;
}

/** Compressed once per asset and encoding, at its first request: the build does not change while the server runs. */
const compressed = new Map<string, Uint8Array>();
function encoded(name: string, body: Uint8Array, encoding: Encoding): Uint8Array {
  const key = `${encoding}:${name}`;
  let out = compressed.get(key);
  if (!out) {
    out =
      encoding === 'br'
        ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
        : gzipSync(body, { level: 9 });
    compressed.set(key, out);
  }
  return out;
}

/** The answer to GET `path` under /console: status, headers, body. */
export async function consoleResponse(
  path: string,
  config: Config,
  acceptEncoding?: string,
): Promise<{ status: number; headers: Record<string, string>; body: string | Uint8Array }> {
  const security = { ...securityHeaders(config), 'cache-control': PAGE_CACHE_CONTROL };
  if (path === CONSOLE_PATH) {
    return { status: 308, headers: { location: `${CONSOLE_PATH}/`, ...security }, body: '' };
  }
  built ??= buildConsole().catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  const { assets, html } = await built;
  const assetPrefix = `${CONSOLE_PATH}/${CONSOLE_ASSETS}/`;
  if (path === `${assetPrefix}${CONSOLE_CONFIG_FILE}`) {
    // No api_url: the API is this server, the console's own origin.
    return {
      status: 200,
      headers: { 'content-type': 'application/json', ...security },
      body: JSON.stringify(consoleSettings(config)),
    };
  }
  if (path.startsWith(assetPrefix)) {
    const asset = assets.get(path.slice(assetPrefix.length));
    if (!asset) {
      return {
        status: 404,
        headers: { 'content-type': 'application/json', ...security },
        body: JSON.stringify({ error: 'not_found', message: `No console asset at ${path}.` }),
      };
    }
    const name = path.slice(assetPrefix.length);
    const encoding = chooseEncoding(acceptEncoding);
    return {
      status: 200,
      headers: {
        ...security,
        'content-type': asset.contentType,
        'cache-control': ASSET_CACHE_CONTROL,
        vary: 'accept-encoding',
        ...(encoding ? { 'content-encoding': encoding } : {}),
      },
      body: encoding ? encoded(name, asset.body, encoding) : asset.body,
    };
  }
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', ...security },
    body: html,
  };
}
