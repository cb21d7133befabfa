// The admin console as the stack deploys it, on an origin of its own: the build staged as the stack stages it
// (stageConsole), its config.json with the API's URL as the deployment writes it, answered as CloudFront answers
// (the viewer-request function PAGE_ROUTING run as the construct's test runs it, S3's 403 for a missing object, the
// deployment's cache-control) with the response headers policy's headers (consoleSiteHeaders). Only the transport
// differs: plain HTTP on loopback, where CloudFront is HTTPS.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { consoleSettings } from '#console/settings.ts';
import type { Config } from '#shared/config/schema.ts';
import {
  CONSOLE_FILES_CACHE_CONTROL,
  CONSOLE_SETTINGS_KEY,
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
    send(
      200,
      {
        'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': String(CONSOLE_FILES_CACHE_CONTROL.value),
      },
      await readFile(file),
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
