import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context as LambdaContext,
} from 'aws-lambda';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { databaseFault, sqlState } from '../db/errors.ts';
import type { Runtime } from '../runtime.ts';
import {
  badRequest,
  databaseBusy,
  databaseUnavailable,
  forbidden,
  HttpError,
  internalError,
  notFound,
  payloadTooLarge,
  unauthorized,
} from './errors.ts';
import { type Logger, rootLogger } from './logger.ts';
import type { Reply } from './reply.ts';
import { errorStatuses, type RouteInput, type RouteSpec } from './route.ts';
import { parsePart } from './validation.ts';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** Everything a handler gets besides its parsed input. */
export interface RequestContext {
  requestId: string;
  log: Logger;
  runtime: Runtime;
  config: Config;
  db: Db;
  /** The signed-in person, for user/admin/device+user routes. */
  principal: Principal | undefined;
  sourceIp: string;
  headers: Record<string, string | undefined>;
  event: HttpEvent;
  /** Size of the request body as received, before parsing. */
  rawBodyBytes: number;
  /** The request body text as received (base64 decoded when API Gateway encoded it), before parsing. */
  rawBody: string | undefined;
  /** Set by the device authenticator on device routes. */
  device: VerifiedDeviceRequest | undefined;
}

/** What a verified signed device request proves (see shared/device/authenticate.ts). */
export interface VerifiedDeviceRequest {
  fingerprint: string;
  keyType: 'p256' | 'ed25519';
  certificatePem: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 of the signature bytes: the replay key. */
  signatureHash: string;
  /** Until when the replay record must be kept (the end of the freshness window). */
  replayUntil: Date;
}

export type HandlerFn<R extends RouteSpec> = (input: RouteInput<R>, ctx: RequestContext) => Promise<Reply>;
/**
 * Extra authentication for device routes (signature checks), plugged in by the device module. It receives the body
 * exactly as parsed from JSON (before zod strips anything), since that is what the device signed.
 */
export type Authenticator = ((ctx: RequestContext, rawBody: unknown) => Promise<void>) & {
  /**
   * Runs before the stack rejects the body (precheck or validation) of an authenticated request: an authenticator
   * that leaves part of its check to the handler's write (the device's enrollment) completes it here, so that its
   * error still comes before anything about the body.
   */
  beforeBodyRejected?: (ctx: RequestContext) => Promise<void>;
};
/**
 * A cheap check of the parsed body that must answer before full validation (e.g. the event batch bound, 413), run
 * after authentication so that an unauthenticated caller learns nothing about its body.
 */
export type Precheck = (ctx: RequestContext, rawBody: unknown) => void;

interface State {
  requestId: string;
  log: Logger;
  started: number;
  ctx?: RequestContext;
}

/** The content types middy's JSON body parser accepts (@middy/util jsonContentTypePattern). */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;
const MAY_SPELL_FORBIDDEN_KEY = /__proto__|constructor|\\u/;

function toResult(status: number, body: unknown, headers: Record<string, string>): HttpResult {
  if (body === undefined) return { statusCode: status, headers };
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * Maps anything thrown to the error model; nothing about a 500 (stack, SQL, parameters) reaches the response. A
 * database fault is 503 (shared/db/errors.ts); a statement timeout says which limit it ran into.
 */
export function errorToHttp(err: unknown, config?: Pick<Config, 'db'>): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { statusCode?: number; cause?: { package?: string } };
  if (e?.cause?.package === '@middy/http-json-body-parser') {
    return e.statusCode === 415
      ? badRequest('invalid_content_type', 'Send the body as JSON with Content-Type: application/json.')
      : badRequest('invalid_json', 'The request body is not valid JSON.');
  }
  const fault = databaseFault(err);
  if (fault === 'unavailable') return databaseUnavailable();
  if (fault === 'busy') {
    return sqlState(err) === '57014' && config
      ? databaseBusy(
          `The statement ran past the database's time limit (db.statement_timeout = ${config.db.statement_timeout / 1000} s); retry, or ask for less (a shorter range, more filters).`,
        )
      : databaseBusy();
  }
  return internalError();
}

// Loaded once, at the first invocation that needs them (see the first `before` step); the promise is kept so that
// later invocations do not resolve the specifier again.
let runtimeImport: Promise<typeof import('../runtime.ts')> | undefined;
let authenticateImport: Promise<typeof import('../auth/authenticate.ts')> | undefined;
const runtimeModule = () => {
  runtimeImport ??= import('../runtime.ts');
  return runtimeImport;
};
const authenticateModule = () => {
  authenticateImport ??= import('../auth/authenticate.ts');
  return authenticateImport;
};

/**
 * The middy stack every HTTP function uses, and the one place that orders its steps: request id + access log,
 * mount check, the raw body size bound (413), bearer authentication by the route's auth kind, body parsing (JSON;
 * skipped for an empty body), the device signature (device routes: 401 before anything about the body is said),
 * the route's prechecks (e.g. the event batch bound, 413), validation of params/query/body by its zod schemas, the
 * handler, then the envelope. Errors become `{error, message}` in one place.
 */
export function httpHandler<R extends RouteSpec>(
  route: R,
  fn: HandlerFn<R>,
  options: { deviceAuth?: Authenticator; precheck?: Precheck } = {},
) {
  const base = async (event: HttpEvent, _lambda: LambdaContext): Promise<HttpResult> => {
    const state = (event as unknown as { __state: State }).__state;
    const ctx = state.ctx as RequestContext;
    const rawBody = (event as { body?: unknown }).body;
    if (route.auth === 'device' || route.auth === 'device+user') {
      if (!options.deviceAuth) throw new Error(`route ${route.path} needs a device authenticator`);
      await options.deviceAuth(ctx, rawBody);
    }
    let input: { params: unknown; query: unknown; body: unknown };
    try {
      options.precheck?.(ctx, rawBody);
      input = {
        params: parsePart(route.params, event.pathParameters ?? {}, 'path'),
        query: parsePart(route.query, event.queryStringParameters ?? {}, 'query', {
          nulAllowed: !errorStatuses(route).includes(400),
        }),
        body: parsePart(route.body, rawBody ?? {}, 'body'),
      };
    } catch (err) {
      await options.deviceAuth?.beforeBodyRejected?.(ctx);
      throw err;
    }
    const reply = await fn(input as RouteInput<R>, ctx);
    if (reply.contentType) {
      return {
        statusCode: reply.status,
        headers: { 'content-type': reply.contentType, ...reply.headers },
        body: String(reply.body),
      };
    }
    const body = reply.envelope ? { success: true, data: reply.body } : reply.body;
    return toResult(reply.status, body, { ...(reply.headers ?? {}) });
  };

  return middy<HttpEvent, HttpResult>(base)
    .before(async (request) => {
      const event = request.event;
      const headers = event.headers ?? {};
      const requestId =
        headers['x-request-id']?.slice(0, 128) || event.requestContext?.requestId || randomUUID();
      const log = rootLogger.child({ requestId, route: `${route.method} ${route.path}` });
      const state: State = { requestId, log, started: performance.now() };
      Object.defineProperty(event, '__state', { value: state, enumerable: false });
      // The runtime (config, secrets, database client) and the authenticators are loaded with their first use, at
      // the first invocation: a Lambda bundle splits them into chunks of their own (infra/bundling.ts), so that
      // loading the function costs only its route and handler.
      const runtime = await (await runtimeModule()).getRuntime();
      if (route.mountedWhen && !route.mountedWhen(runtime.config)) throw notFound('No such route.');
      const ctx: RequestContext = {
        requestId,
        log,
        runtime,
        config: runtime.config,
        db: runtime.database.db,
        principal: undefined,
        sourceIp: event.requestContext?.http?.sourceIp ?? '',
        headers,
        event,
        rawBodyBytes: event.body
          ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
          : 0,
        rawBody:
          event.body && event.isBase64Encoded
            ? Buffer.from(event.body, 'base64').toString('utf8')
            : event.body || undefined,
        device: undefined,
      };
      state.ctx = ctx;
      if (route.maxBody && ctx.rawBodyBytes > route.maxBody.bytes) {
        const message = `The request body is larger than ${route.maxBody.bytes} bytes.`;
        // 413, unless the route's spec lists no such status: then it is a Bad Request like any other.
        throw errorStatuses(route).includes(413)
          ? payloadTooLarge(route.maxBody.code, message)
          : badRequest(route.maxBody.code, message);
      }
      if (route.auth === 'user' || route.auth === 'admin' || route.auth === 'device+user') {
        const { authenticate, servicePrincipal } = await authenticateModule();
        // A route that names a service token also takes that token (and only that route does).
        const service = route.serviceToken
          ? servicePrincipal(runtime.config, route.serviceToken, headers)
          : undefined;
        ctx.principal = service ?? (await authenticate(runtime.config, headers));
        // A CLI sign-in token is a credential for enrollment only (register, the one device+user route): anywhere
        // else it is no credential at all, as a token for another audience is, so 401 (sign in for a session
        // token), not 403 (a signed-in person without the role). 403 is left to the role check.
        if (ctx.principal.tokenUse === 'cli' && route.auth !== 'device+user') {
          throw unauthorized(
            'This token only enrolls a device (POST /v1/devices/register); sign in to the dashboard for a session token.',
            'invalid_token',
          );
        }
        if (route.auth === 'admin' && !service && !isAdmin(ctx.principal)) throw forbidden();
      }
    })
    .before(async (request) => {
      // Only parse when there is a body: optional bodies (approve notes, revoke reason) may be absent. A route
      // without a body schema takes no body: what is sent anyway (a GET with content) is ignored, not parsed, so it
      // cannot answer 400 invalid_json there.
      const event = request.event;
      const body = event.body;
      if (body === undefined || body === null || body === '' || !route.body) {
        (event as { body?: unknown }).body = undefined;
        return;
      }
      // middy's parser refuses __proto__ / constructor keys through a JSON.parse reviver, which makes parsing a
      // large batch several times slower. A body whose text cannot spell such a key (neither word, no \u escape)
      // is parsed plainly; anything else, and any error, goes through middy's parser and its error reporting.
      const contentType = event.headers?.['content-type'] ?? event.headers?.['Content-Type'];
      if (
        !event.isBase64Encoded &&
        JSON_CONTENT_TYPE.test(contentType ?? '') &&
        !MAY_SPELL_FORBIDDEN_KEY.test(body)
      ) {
        try {
          (event as { body?: unknown }).body = JSON.parse(body);
          return;
        } catch {
          // reported below
        }
      }
      await httpJsonBodyParser().before?.(request as never);
    })
    .after(async (request) => {
      const state = (request.event as unknown as { __state: State }).__state;
      const response = request.response as HttpResult;
      response.headers = { ...(response.headers ?? {}), 'x-request-id': state.requestId };
      state.log.info('request', {
        method: request.event.requestContext?.http?.method,
        path: request.event.rawPath,
        status: response.statusCode,
        durationMs: Math.round(performance.now() - state.started),
      });
    })
    .onError(async (request) => {
      const state = (request.event as unknown as { __state?: State }).__state;
      const requestId = state?.requestId ?? randomUUID();
      const log = state?.log ?? rootLogger.child({ requestId });
      const httpError = errorToHttp(request.error, state?.ctx?.config);
      const fields = {
        method: request.event.requestContext?.http?.method,
        path: request.event.rawPath,
        status: httpError.status,
        error: httpError.code,
        durationMs: state ? Math.round(performance.now() - state.started) : undefined,
      };
      if (httpError.status >= 500) {
        // Log the class and a message without parameters: drizzle's message carries the query's values.
        const err = request.error as { name?: string; cause?: { code?: string; name?: string } } | null;
        log.error('request failed', {
          ...fields,
          errorName: err?.name,
          causeName: err?.cause?.name,
          causeCode: err?.cause?.code,
        });
      } else {
        log.info('request', fields);
      }
      request.response = toResult(httpError.status, httpError.toJSON(), {
        ...httpError.headers,
        'x-request-id': requestId,
      });
    });
}
