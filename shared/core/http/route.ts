import type { z } from 'zod';
import type { Config } from '../config/schema.ts';
import type { ErrorKind } from '../errors.ts';

/**
 * Who may call a route: public (anyone), user (any signed-in person), admin (role admin), device (a signed device
 * request, certificate-authenticated), device+user (signed and carrying the user's bearer token).
 */
export type AuthKind = 'public' | 'user' | 'admin' | 'device' | 'device+user';
/** Config keys holding a service's bearer token (see RouteSpec.serviceToken). */
export type { ServiceTokenKey } from '../auth/authenticate.ts';

import type { ServiceTokenKey } from '../auth/authenticate.ts';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Sizes Lambda memory and timeout per kind in the stack. */
export type RouteKind = 'read' | 'write' | 'ingest' | 'query';

export interface RouteSpec {
  method: Method;
  /** API Gateway path template, e.g. /v1/requests/{id}. */
  path: string;
  /** Function file under functions/, without extension; aliases name the same file and share its Lambda. */
  handler: string;
  auth: AuthKind;
  summary: string;
  tags: readonly string[];
  kind?: RouteKind;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** The success body as sent (including the envelope when there is one), for the OpenAPI document. */
  response?: z.ZodType;
  /** A success body that is not JSON (a page, a script): its content type, for the OpenAPI document. */
  responseType?: 'text/html' | 'text/javascript' | 'application/x-ndjson';
  /** The statuses of a success, the first the usual one (default [200]); each answers `response`. */
  successStatuses?: readonly number[];
  /** Request headers the route reads besides Authorization and the device signature (for the OpenAPI document). */
  headers?: ReadonlyArray<{
    name: string;
    description: string;
    required?: boolean;
    schema: Record<string, unknown>;
  }>;
  /**
   * Statuses of the error responses it documents besides those implied by its schemas and auth (400/401/403/404),
   * 500, and 503 (database_unavailable, database_busy) for every route that uses the database.
   */
  errors?: readonly number[];
  /**
   * The error statuses the service spec lists for this route (its Errors table). The route answers no other, but
   * 503 when the database is unavailable and those in `errors`, each a deliberate exception; a body over `maxBody`
   * is then 400 unless 413 is listed.
   */
  specErrors?: readonly number[];
  /**
   * Where the route's spec gives an error kind another status than the usual one (shared/core/http/middleware/
   * error-response.ts STATUS_OF_KIND): approve answers a request that is not pending 404, revoke 400, and the query
   * and catalog-update routes a body over the limit 400, because their spec lists no Conflict or 413.
   */
  statusOf?: Readonly<Partial<Record<ErrorKind, number>>>;
  /** Error statuses whose body is not `{error, message}` (the health check's 503 is the health report). */
  errorBodies?: Readonly<Partial<Record<number, z.ZodType>>>;
  /** false: answers without the database, so never 503 database_unavailable / database_busy (the OpenAPI document). */
  database?: false;
  /** Bodies larger than this are refused with 413 and this error code, before parsing. */
  maxBody?: { bytes: number; code: string };
  /**
   * Also accepts, instead of an admin's token, the bearer token configured at this config key (a service's: the log
   * shipper's). No other route accepts it. Empty in the config: only the route's `auth` applies.
   */
  serviceToken?: ServiceTokenKey;
  /** Mounted only when this returns true (e.g. CLI sign-in needs a dashboard URL). */
  mountedWhen?: (config: Config) => boolean;
  description?: string;
}

export const defineRoute = <const R extends RouteSpec>(route: R): R => route;

/** A row given again without its `/v1` prefix: same handler (so the same Lambda), auth and schemas. */
export type Unversioned<R extends RouteSpec> = Omit<R, 'path' | 'summary' | 'description'> & {
  path: string;
  summary: string;
};
type WithUnversioned<T extends Record<string, RouteSpec>> = T & {
  [K in keyof T & string as `${K}Alias`]: Unversioned<T[K]>;
};

/**
 * The rows of `table`, each followed by its alias `<id>Alias` at the path without `/v1` (the spec gives the admin
 * observability endpoints under /admin/* too). The alias's summary points at its row, which carries the description.
 */
export function withUnversionedAliases<const T extends Record<string, RouteSpec>>(
  table: T,
): WithUnversioned<T> {
  return Object.fromEntries(
    Object.entries(table).flatMap(([id, row]) => {
      if (!row.path.startsWith('/v1/')) throw new Error(`${id}: ${row.path} has no /v1 prefix to drop`);
      const { description: _description, ...rest } = row;
      const alias = { ...rest, path: row.path.slice(3), summary: `Alias of ${row.method} ${row.path}` };
      return [
        [id, row],
        [`${id}Alias`, alias],
      ];
    }),
  ) as WithUnversioned<T>;
}

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;
export interface RouteInput<R extends RouteSpec> {
  params: Out<R['params']>;
  query: Out<R['query']>;
  body: Out<R['body']>;
}

/** Every status a route answers besides its successes: declared, or implied by its shape (the OpenAPI document). */
export function errorStatuses(route: RouteSpec): number[] {
  const set = new Set<number>([500, ...(route.errors ?? [])]);
  if (route.database !== false) set.add(503);
  if (route.specErrors) {
    for (const status of route.specErrors) set.add(status);
    return [...set].sort();
  }
  if (route.body || route.query || route.params) set.add(400);
  if (route.maxBody) set.add(413);
  // A body in another charset than UTF-8 (shared/core/http/middleware/request-text.ts).
  if (route.body) set.add(415);
  if (route.auth !== 'public') set.add(401);
  // Only an admin route refuses a signed-in person for a role; a session-less token is 401 everywhere.
  if (route.auth === 'admin') set.add(403);
  // A route that is not mounted under some config (CLI sign-in without a dashboard URL) is the default route's 404.
  if (route.params || route.mountedWhen) set.add(404);
  return [...set].sort();
}

/** The statuses of a success, the usual one first. */
export const successStatuses = (route: RouteSpec): readonly number[] => route.successStatuses ?? [200];
