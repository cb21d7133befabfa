// Every HTTP function is this: a middy chain of small named middlewares (shared/core/http/middleware/), in one order, and
// the route's handler at its core. The order: the request's context and access log; the mount check; the body size
// bound; who is calling (bearer token); the request's text, decoded strictly as UTF-8; the body as JSON; the device
// signature (device routes); the route's prechecks and validation; the handler; its reply as the HTTP answer.
// Anything thrown becomes `{error, message}` in errorResponse. A handler receives its parsed input and a context
// typed for its route's authentication.
import middy from '@middy/core';
import {
  type ContextFor,
  contextFor,
  type HttpEvent,
  type HttpResult,
  type ServiceContext,
} from './context.ts';
import { bearerAuth } from './middleware/bearer-auth.ts';
import { bodyLimit } from './middleware/body-limit.ts';
import { errorResponse } from './middleware/error-response.ts';
import { jsonBody } from './middleware/json-body.ts';
import { mounted } from './middleware/mounted.ts';
import { requestContext } from './middleware/request-context.ts';
import { requestText } from './middleware/request-text.ts';
import type { ServiceMiddleware } from './middleware/types.ts';
import { type Precheck, validate } from './middleware/validate.ts';
import { type Reply, toHttpResult } from './reply.ts';
import type { RouteInput, RouteSpec } from './route.ts';

export type HandlerFn<R extends RouteSpec> = (
  input: RouteInput<R>,
  ctx: ContextFor<R['auth']>,
) => Promise<Reply>;

export interface HandlerOptions {
  /** How the device signature is checked (shared/devices/device-signature.ts): every device route has one. */
  deviceAuth?: ServiceMiddleware;
  /** Cheap checks of the parsed body that answer before validation, after authentication (the event batch bound). */
  prechecks?: readonly Precheck[];
}

export function httpHandler<R extends RouteSpec>(route: R, fn: HandlerFn<R>, options: HandlerOptions = {}) {
  const device = route.auth === 'device' || route.auth === 'device+user';
  if (device !== Boolean(options.deviceAuth)) {
    throw new Error(
      `${route.method} ${route.path}: a device route, and only one, takes a device authenticator`,
    );
  }
  const core = async (_event: HttpEvent, context: ServiceContext): Promise<HttpResult> => {
    const ctx = contextFor(route.auth, context);
    return toHttpResult(await fn(context.input as RouteInput<R>, ctx as ContextFor<R['auth']>));
  };
  return middy<HttpEvent, HttpResult, Error, ServiceContext>(core).use([
    errorResponse(route),
    requestContext(route),
    mounted(route),
    bodyLimit(route),
    bearerAuth(route),
    requestText(route),
    jsonBody(route),
    ...(options.deviceAuth ? [options.deviceAuth] : []),
    validate(route, options.prechecks),
  ]);
}
