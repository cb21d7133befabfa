// The request's path parameters, query and body, validated by the route's zod schemas (shared/core/http/validation.ts:
// U+0000 refused everywhere first, then each 400 names its field). Before that, the route's own prechecks (the event
// batch bound). A refusal of an authenticated request first lets its authenticator finish (beforeBodyRejected), so
// that what the caller is not allowed to know about its body stays unsaid.
import type { RouteSpec } from '../route.ts';
import { parsePart } from '../validation.ts';
import type { ServiceMiddleware, ServiceRequest } from './types.ts';

/** A cheap check of the parsed body that must answer before full validation, after authentication. */
export type Precheck = (request: ServiceRequest) => void;

export function validate(route: RouteSpec, prechecks: readonly Precheck[] = []): ServiceMiddleware {
  return {
    name: 'validate',
    before: async (request) => {
      const { event, context } = request;
      try {
        for (const precheck of prechecks) precheck(request);
        context.input = {
          params: parsePart(route.params, event.pathParameters ?? {}, 'path'),
          query: parsePart(route.query, event.queryStringParameters ?? {}, 'query'),
          body: parsePart(route.body, context.parsedBody ?? {}, 'body'),
        };
      } catch (err) {
        await context.beforeBodyRejected?.();
        throw err;
      }
    },
  };
}
