// The one place where anything thrown becomes an answer: a ServiceError's kind is a status (STATUS_OF_KIND, or the
// route's own where its spec lists other statuses: RouteSpec.statusOf), a database fault is 503 (shared/core/db/errors.ts),
// anything else is 500 and nothing about it (stack, SQL, parameters) reaches the response. Always `{error, message}`,
// with x-request-id, Retry-After when retrying later helps, and WWW-Authenticate on a 401 of a bearer route.
import { randomUUID } from 'node:crypto';
import { databaseFault, sqlState } from '../../db/errors.ts';
import {
  databaseBusy,
  databaseUnavailable,
  type ErrorKind,
  internalError,
  ServiceError,
} from '../../errors.ts';
import { rootLogger } from '../../logger.ts';
import type { HttpResult } from '../context.ts';
import type { RouteSpec } from '../route.ts';
import { takesBearerToken } from './bearer-auth.ts';
import type { ServiceMiddleware } from './types.ts';

export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  dependency_failed: 502,
  dependency_unavailable: 503,
};

/** The status of an error kind on a route. */
export const statusOf = (route: RouteSpec, kind: ErrorKind): number =>
  route.statusOf?.[kind] ?? STATUS_OF_KIND[kind];

/** Anything thrown, as the service's error; a statement timeout says which limit it ran into. */
export function asServiceError(err: unknown, statementTimeoutMs?: number): ServiceError {
  if (err instanceof ServiceError) return err;
  const fault = databaseFault(err);
  if (fault === 'unavailable') return databaseUnavailable();
  if (fault === 'busy') {
    return sqlState(err) === '57014' && statementTimeoutMs !== undefined
      ? databaseBusy(
          `The statement ran past the database's time limit (db.statement_timeout = ${statementTimeoutMs / 1000} s); retry, or ask for less (a shorter range, more filters).`,
        )
      : databaseBusy();
  }
  return internalError();
}

export function errorResponse(route: RouteSpec): ServiceMiddleware {
  return {
    name: 'errorResponse',
    onError: async (request) => {
      const { event, context } = request;
      const error = asServiceError(request.error, context.config?.db.statement_timeout);
      const status = statusOf(route, error.kind);
      const requestId = context.requestId ?? randomUUID();
      const log = context.log ?? rootLogger.child({ correlation_id: requestId });
      const fields = {
        method: event.requestContext?.http?.method,
        path: event.rawPath,
        status,
        error: error.code,
        durationMs:
          context.started === undefined ? undefined : Math.round(performance.now() - context.started),
      };
      if (status >= 500) {
        // The class and the SQLSTATE of what failed, never its message: drizzle's carries the query's values.
        const cause = request.error as { name?: string; cause?: { code?: string; name?: string } } | null;
        log.error('request failed', {
          ...fields,
          errorName: cause?.name,
          causeName: cause?.cause?.name,
          causeCode: cause?.cause?.code,
        });
      } else {
        log.info('request', fields);
      }
      const headers: Record<string, string> = {
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': requestId,
      };
      if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
      if (status === 401 && takesBearerToken(route)) headers['www-authenticate'] = 'Bearer';
      const response: HttpResult = { statusCode: status, headers, body: JSON.stringify(error.toJSON()) };
      request.response = response;
    },
  };
}
