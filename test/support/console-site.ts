// The admin console as the stack deploys it, on an origin of its own: the build staged as the stack stages it
// (stageConsole), its config.json with the API's URL as the deployment writes it, answered as CloudFront answers
// (the viewer-request function PAGE_ROUTING run as the construct's test runs it, S3's 403 for a missing object, the
// deployment's cache-control) with the response headers policy's headers (consoleSiteHeaders). Only the transport
// differs: plain HTTP on loopback, where CloudFront is HTTPS.
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, get, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { consoleSettings } from '#console/settings.ts';
import { chooseEncoding } from '#local-server/console.ts';
import type { Config } from '#shared/core/config/schema.ts';
import {
  CONSOLE_SETTINGS_KEY,
  consoleCacheControl,
  PAGE_ROUTING,
  stageConsole,
} from '../../infra/constructs/console-site.ts';

/** What S3 names the types of the console's files (the deployment sets them from the extension). */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
};

type ViewerRequest = (event: { request: { uri: string } }) => {
  uri?: string;
  statusCode?: number;
  headers?: Record<string, { value: string }>;
};

/**
 * The console's files as the bucket holds them after `deploy(apiUrl)`: the staged build and config.json. Returns the
 * directory (below `dir`) whose keys are the bucket's.
 */
export async function deployedConsoleFiles(dir: string, config: Config, apiUrl: string): Promise<string> {
  const root = stageConsole(dir);
  await writeFile(join(root, CONSOLE_SETTINGS_KEY), JSON.stringify(consoleSettings(config, apiUrl)));
  return root;
}

export interface ConsoleSiteServer {
  /** http://127.0.0.1:<port>: the origin the API's CORS must allow. */
  origin: string;
  close(): Promise<void>;
}

/**
 * Serves the bucket directory `root` as the distribution does, every answer with `headers` (the policy's), on `port`
 * (0: any free one).
 */
export async function startConsoleSite(
  root: string,
  headers: Record<string, string>,
  port = 0,
): Promise<ConsoleSiteServer> {
  const viewerRequest = new Function(`${PAGE_ROUTING}; return handler;`)() as ViewerRequest;
  const server = createServer(async (req, res) => {
    const send = (status: number, extra: Record<string, string>, body?: Buffer | string) => {
      res.writeHead(status, { ...extra, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    // The distribution allows GET and HEAD only (ALLOW_GET_HEAD).
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(403, {}, '');
    const uri = new URL(req.url ?? '/', 'http://site').pathname;
    const routed = viewerRequest({ request: { uri } });
    if (routed.statusCode) {
      const location = routed.headers?.location?.value;
      return send(routed.statusCode, location ? { location } : {}, '');
    }
    const key = normalize(decodeURIComponent(routed.uri ?? uri)).replace(/^\/+/, '');
    const file = join(root, key);
    const isFile = await stat(file).then(
      (s) => s.isFile(),
      () => false,
    );
    // Origin access control without s3:ListBucket: a missing object is S3's 403.
    if (key.startsWith('..') || !isFile) {
      return send(403, { 'content-type': 'application/xml' }, '<Error><Code>AccessDenied</Code></Error>');
    }
    // CloudFront compresses what its cache policy allows (CachingOptimized: brotli and gzip) when the viewer asks.
    const body = await readFile(file);
    const encoding = chooseEncoding(req.headers['accept-encoding']);
    send(
      200,
      {
        'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': consoleCacheControl(key),
        vary: 'accept-encoding',
        ...(encoding ? { 'content-encoding': encoding } : {}),
      },
      encoding === 'br' ? brotliCompressSync(body) : encoding === 'gzip' ? gzipSync(body) : body,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One GET with node:http, so that nothing decodes the body: status, headers and the bytes as sent. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    }).on('error', reject);
  });
}

/**
 * The console's caching and compression at `origin`, as a browser meets them: the page never cached and naming
 * content-hashed assets; each asset cached for a year, sent with brotli or gzip as asked, the same bytes once decoded.
 * Held in both layouts: the local server, and the deployed files served as CloudFront serves them.
 */
export async function assertConsoleAssetDelivery(origin: string): Promise<void> {
  const page = await rawGet(`${origin}/console/`, { 'accept-encoding': 'identity' });
  assert.equal(page.status, 200);
  assert.equal(page.headers['cache-control'], 'no-store');
  const names = [
    ...page.body.toString().matchAll(/"\/console\/assets\/(console-[A-Z0-9]+\.(?:js|css))"/g),
  ].map((m) => m[1] as string);
  assert.equal(names.length, 2, 'index.html names a hashed script and a hashed stylesheet');
  for (const name of names) {
    const url = `${origin}/console/assets/${name}`;
    const plain = await rawGet(url, { 'accept-encoding': 'identity' });
    assert.equal(plain.status, 200, name);
    assert.equal(plain.headers['content-encoding'], undefined, name);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable', name);
    const br = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br', name);
    assert.match(String(br.headers.vary), /accept-encoding/i, name);
    assert.deepEqual(brotliDecompressSync(br.body), plain.body, name);
    assert.ok(
      br.body.length < plain.body.length / 2,
      `${name}: brotli ${br.body.length} of ${plain.body.length}`,
    );
    const gz = await rawGet(url, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip', name);
    assert.deepEqual(gunzipSync(gz.body), plain.body, name);
  }
  const settings = await rawGet(`${origin}/console/assets/config.json`, {});
  assert.equal(settings.headers['cache-control'], 'no-store');
}
