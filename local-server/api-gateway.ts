// An API Gateway HTTP API (payload format 2.0) emulator: it turns node:http requests into the very events API
// Gateway sends, calls the handler exports Lambda calls, and writes their results back. CORS is answered here, as
// the gateway's corsPreflight does in AWS (functions never set CORS headers).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Config } from '#shared/core/config/schema.ts';
import { invalidField } from '#shared/core/errors.ts';
import { isUtf8Charset, mediaType } from '#shared/core/http/content-type.ts';
import { corsHeaders, preflightHeaders } from '#shared/core/http/cors.ts';
import type { RouteSpec } from '#shared/core/http/route.ts';
import { decodeUtf8, undecodablePercent } from '#shared/core/http/utf8.ts';
import type { Logger } from '#shared/core/logger.ts';
import { consoleResponse, isConsolePath } from './console.ts';

export type LambdaHttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;

interface CompiledRoute {
  id: string;
  route: RouteSpec;
  pattern: RegExp;
  paramNames: string[];
  load: () => Promise<LambdaHttpHandler>;
}

// API Gateway HTTP APIs accept payloads up to 10 MB.
const MAX_BODY_BYTES = 10 * 1024 * 1024;
const FUNCTIONS_DIR = fileURLToPath(new URL('../functions/', import.meta.url));

function compile(id: string, route: RouteSpec): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const match = /^\{(\w+)\+?\}$/.exec(segment);
      if (!match) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      paramNames.push(match[1] as string);
      return segment.endsWith('+}') ? '(.+)' : '([^/]+)';
    })
    .join('/');
  return { id, route, pattern: new RegExp(`^${source}$`), paramNames, load: loader(route.handler) };
}

/** Imports functions/<handler>.ts once, at its first request. */
function loader(handler: string): () => Promise<LambdaHttpHandler> {
  let loaded: Promise<LambdaHttpHandler> | undefined;
  return () => {
    loaded ??= import(`${FUNCTIONS_DIR}${handler}.ts`).then(
      (mod: { handler: LambdaHttpHandler }) => mod.handler,
    );
    return loaded;
  };
}

export function lambdaContext(functionName: string, requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/** The media types whose bodies an HTTP API passes to Lambda as text (docs/api.md, "Text is UTF-8"). */
const TEXT_MEDIA = /^(text\/[^\s]+|application\/(json|xml|javascript))$/;

/**
 * Whether API Gateway passes a body as text (isBase64Encoded false) rather than base64: a text media type with no
 * parameter but a UTF-8 charset; any other type, none, or another charset is base64. For bytes that are not UTF-8
 * under a text type AWS documents nothing; here they go base64 too, so that the function sees them as they were.
 */
export function passedAsText(contentType: string | undefined, body: Buffer): boolean {
  const type = mediaType(contentType);
  if (!type || !TEXT_MEDIA.test(type.essence)) return false;
  const params = Object.entries(type.params);
  if (params.some(([name, value]) => name !== 'charset' || !isUtf8Charset(value))) return false;
  return decodeUtf8(body) !== undefined;
}

/**
 * The body, or `tooLarge` once it passed MAX_BODY_BYTES. The rest of a body that is too large is read and dropped, so
 * that the client, still sending, sees the 413 rather than a reset connection; node:http's requestTimeout bounds how
 * long that may take.
 */
function readBody(req: IncomingMessage): Promise<{ body: Buffer; tooLarge: false } | { tooLarge: true }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(size > MAX_BODY_BYTES ? { tooLarge: true } : { body: Buffer.concat(chunks), tooLarge: false }),
    );
    req.on('error', reject);
  });
}

/** Builds the payload 2.0 event exactly as API Gateway does (lower-cased headers, comma-joined repeats, cookies). */
export function toEvent(
  req: IncomingMessage,
  body: Buffer,
  routeKey: string,
  pathParameters: Record<string, string>,
  requestId: string,
): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) query[key] = key in query ? `${query[key]},${value}` : value;
  const cookies = req.headers.cookie?.split(/;\s*/).filter(Boolean);
  const textual = passedAsText(headers['content-type'], body);
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    ...(cookies?.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length ? { pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: (req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

/**
 * The decoded path parameters of a route's match, or the first that is not percent-encoded UTF-8 and what in it is
 * not (`%FF`, `%ZZ`).
 */
function decodeParams(
  names: readonly string[],
  match: RegExpExecArray,
): { params: Record<string, string> } | { name: string; what: string } {
  const params: Record<string, string> = {};
  for (const [i, name] of names.entries()) {
    const raw = match[i + 1] as string;
    const what = undecodablePercent(raw);
    if (what) return { name, what };
    params[name] = decodeURIComponent(raw);
  }
  return { params };
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body?: string | Uint8Array,
): void {
  res.writeHead(status, headers);
  res.end(body);
}

export interface EmulatorOptions {
  config: Config;
  routes: ReadonlyArray<readonly [string, RouteSpec]>;
  /** The function (functions/<handler>.ts) that answers what no route matches: the API's default route. */
  fallbackHandler: string;
  log: Logger;
  /** Sees every response a function gave, as sent (the tests check each against the OpenAPI document). */
  onResponse?: (response: GatewayResponse) => void;
}

export interface GatewayResponse {
  /** The apigw-requestid header of the response. */
  requestId: string;
  method: string;
  path: string;
  status: number;
  body: string;
}

export interface RunningEmulator {
  server: Server;
  url: string;
  mounted: string[];
  close(): Promise<void>;
}

export async function startApiGateway(
  options: EmulatorOptions,
  port: number,
  host = '127.0.0.1',
): Promise<RunningEmulator> {
  const { config, log } = options;
  const compiled = options.routes
    .filter(([, route]) => !route.mountedWhen || route.mountedWhen(config))
    .map(([id, route]) => compile(id, route));
  const fallbackRoute = { id: '$default', load: loader(options.fallbackHandler) };
  const origins = config.cors.allowed_origins;

  const server = createServer(async (req, res) => {
    const requestId = randomUUID();
    const origin = req.headers.origin;
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const json = { 'content-type': 'application/json', 'apigw-requestid': requestId };
    try {
      if (method === 'OPTIONS' && req.headers['access-control-request-method']) {
        send(res, 204, { ...preflightHeaders(origins, origin), 'apigw-requestid': requestId });
        return;
      }
      const cors = corsHeaders(origins, origin);
      const read = await readBody(req);
      if (read.tooLarge) {
        // The gateway's own answer, before any function: documented as such (docs/api.md, "Size limits").
        send(
          res,
          413,
          { ...json, ...cors },
          JSON.stringify({ error: 'payload_too_large', message: 'The request body is larger than 10 MB.' }),
        );
        return;
      }
      const { body } = read;
      // The admin console's static files (local-server/console.ts); in AWS they are not served by the API.
      if ((method === 'GET' || method === 'HEAD') && isConsolePath(path)) {
        const answer = await consoleResponse(path, config, req.headers['accept-encoding']);
        send(res, answer.status, answer.headers, method === 'HEAD' ? undefined : answer.body);
        return;
      }
      let match: { route: CompiledRoute; params: Record<string, string> } | undefined;
      for (const route of compiled) {
        if (route.route.method !== method) continue;
        const m = route.pattern.exec(path);
        if (!m) continue;
        const decoded = decodeParams(route.paramNames, m);
        if ('what' in decoded) {
          // A segment that is not percent-encoded UTF-8 (`%FF`, `%ZZ`, `%ED%A0%80`) is refused as a query value
          // is (shared/core/http/middleware/request-text.ts), never decoded with U+FFFD in its place.
          const refusal = JSON.stringify(
            invalidField('path', [decoded.name], `is not percent-encoded UTF-8 (${decoded.what})`).toJSON(),
          );
          options.onResponse?.({ requestId, method, path, status: 400, body: refusal });
          send(res, 400, { ...json, ...cors }, refusal);
          return;
        }
        match = { route, params: decoded.params };
        break;
      }
      // No row matches: the gateway's default route (shared/routes.ts `fallback`), as in AWS.
      const target = match ?? { route: fallbackRoute, params: {} };
      const routeKey = match ? `${match.route.route.method} ${match.route.route.path}` : '$default';
      const event = toEvent(req, body, routeKey, target.params, requestId);
      const handler = await target.route.load();
      const result = (await handler(
        event,
        lambdaContext(target.route.id, requestId),
      )) as APIGatewayProxyStructuredResultV2;
      const headers: Record<string, string> = { 'apigw-requestid': requestId, ...cors };
      for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
      if (result.cookies?.length) res.setHeader('set-cookie', result.cookies);
      const payload =
        result.body === undefined
          ? undefined
          : result.isBase64Encoded
            ? Buffer.from(result.body, 'base64')
            : result.body;
      options.onResponse?.({
        requestId,
        method,
        path,
        status: result.statusCode ?? 200,
        body: payload === undefined ? '' : payload.toString(),
      });
      send(res, result.statusCode ?? 200, headers, payload);
    } catch (err) {
      log.error('local gateway failure', { error: (err as Error).message, path });
      if (!res.headersSent) {
        send(res, 500, json, JSON.stringify({ error: 'internal_error', message: 'Internal Server Error' }));
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${address.port}`,
    mounted: compiled.map((r) => `${r.route.method} ${r.route.path}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
