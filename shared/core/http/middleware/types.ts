// The shape of this service's middlewares: middy middleware objects over an API Gateway HTTP API (payload 2.0) event,
// with the request's state on the typed context (shared/core/http/context.ts).
import type { MiddlewareObj, Request } from '@middy/core';
import type { HttpEvent, HttpResult, ServiceContext } from '../context.ts';

export type ServiceMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, ServiceContext>;
export type ServiceRequest = Request<HttpEvent, HttpResult, Error, ServiceContext>;

/** The request's state once requestContext has run (every later middleware runs after it). */
export function stateOf(request: ServiceRequest) {
  const { context } = request;
  if (!context.requestId || !context.runtime || !context.config || !context.db || !context.headers) {
    throw new Error('requestContext has not run');
  }
  return context as ServiceContext &
    Required<Pick<ServiceContext, 'requestId' | 'runtime' | 'config' | 'db' | 'headers'>>;
}
