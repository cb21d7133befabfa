// The first step of every request: its id (the caller's x-request-id, else API Gateway's), a logger bound to it, the
// runtime (config, secrets, database; imported by the first invocation), the body's size;
// and, on the way out, the x-request-id header and the access log line.
import { randomUUID } from 'node:crypto';
import { invocationFields, rootLogger } from '../../logger.ts';
import type { RouteSpec } from '../route.ts';
import type { ServiceMiddleware } from './types.ts';

// Kept once loaded, so that later invocations do not resolve the specifier again.
let runtimeImport: Promise<typeof import('../../runtime.ts')> | undefined;

export function requestContext(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'requestContext',
    before: async ({ event, context }) => {
      const headers = event.headers ?? {};
      context.started = performance.now();
      context.requestId =
        headers['x-request-id']?.slice(0, 128) || event.requestContext?.requestId || randomUUID();
      context.log = rootLogger.child({
        ...invocationFields(context, context.requestId),
        route: `${route.method} ${route.path}`,
      });
      runtimeImport ??= import('../../runtime.ts');
      const runtime = await (await runtimeImport).getRuntime();
      context.runtime = runtime;
      context.config = runtime.config;
      context.db = runtime.database.db;
      context.sourceIp = event.requestContext?.http?.sourceIp ?? '';
      context.headers = headers;
      context.event = event;
      context.rawBodyBytes = event.body
        ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
        : 0;
      // The body's text, once requestText has decoded it strictly (routes that take a body).
      context.rawBody = undefined;
    },
    after: async ({ event, context, response }) => {
      if (!response || !context.requestId) return;
      response.headers = { ...(response.headers ?? {}), 'x-request-id': context.requestId };
      context.log?.info('request', {
        method: event.requestContext?.http?.method,
        path: event.rawPath,
        status: response.statusCode,
        durationMs:
          context.started === undefined ? undefined : Math.round(performance.now() - context.started),
      });
    },
  };
}
