// An admin read's caller check made by the read's own statement, so that the read is one database round trip (one
// Data API call) and the users table still decides on every request. The route's first statement is sent inside one
// that also reads the caller's row, and runs only when that row is an enabled admin (the planner's one-time filter:
// for anyone else it is not executed at all). The row is then judged as a separate lookup would judge it (401 gone or
// disabled, 403 not an admin), and the route's rows are returned only when it passes. A route that makes no raw
// statement, or that fails before its first one, is checked by `settle`, which the middleware awaits before any
// answer leaves, so the answer to a gone, disabled or demoted caller is the same as with the lookup first.
// Only for routes that never write (GET): their statements are then safe to run before the verdict.
import { SQL, type SQLWrapper, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { rowsOf } from '../db/query.ts';
import { forbidden, ServiceError } from '../errors.ts';
import type { AuthenticatedToken } from './authenticate.ts';
import { type CallerRequest, personNow, principalOfJson, USER_JSON, userMatch } from './caller.ts';
import { isAdmin, type Principal } from './principal.ts';

/** Columns the guarded statement adds to the route's; no route's statement names a column so. */
const CALLER = '__caller';
const PRESENT = '__present';
const ORDINAL = '__ordinal';

export interface ReadGuard {
  /** The database for the route: its first raw statement also checks the caller. */
  db: Db;
  /** The caller as the users table has them now (the first statement's verdict, else a lookup), or its error. */
  settle(): Promise<Principal>;
}

const judged = (principal: Principal): Principal => {
  if (!isAdmin(principal)) throw forbidden();
  return principal;
};

/**
 * `query` inside a statement that returns the caller's row (as JSON, NULL when there is none) beside the query's
 * rows, in their order, and runs the query only when that row is an enabled admin.
 */
function guardedStatement(query: SQL, token: AuthenticatedToken): SQL {
  return sql`WITH caller AS MATERIALIZED (
      SELECT ${USER_JSON} AS j, (disabled_at IS NULL AND roles @> '["admin"]'::jsonb) AS ok
      FROM users WHERE ${userMatch(token)} LIMIT 1)
    SELECT c.j AS ${sql.raw(CALLER)}, q.*
    FROM (SELECT (SELECT j FROM caller) AS j, coalesce((SELECT ok FROM caller), false) AS ok) c
    LEFT JOIN LATERAL (SELECT true AS ${sql.raw(PRESENT)}, row_number() OVER () AS ${sql.raw(ORDINAL)}, s.*
      FROM (${query}) s WHERE c.ok) q ON true
    ORDER BY q.${sql.raw(ORDINAL)}`;
}

/** The guard of an admin read whose token (a session token naming an admin) is verified but not yet looked up. */
export function readGuard(request: CallerRequest, token: AuthenticatedToken): ReadGuard {
  const target = request.db;
  let verdict: Promise<Principal> | undefined;
  const settle = () => {
    verdict ??= personNow(request, token).then(judged);
    return verdict;
  };
  const firstStatement = async (query: SQL) => {
    const rows = rowsOf(await target.execute(guardedStatement(query, token)));
    const caller = rows[0]?.[CALLER];
    // No row: the IdP's first token of a subject makes it (as a lookup would), then the query runs.
    if (caller === null || caller === undefined) {
      const principal = judged(await personNow(request, token));
      return { principal, rows: rowsOf(await target.execute(query)) };
    }
    const principal = judged(principalOfJson(String(caller), token.principal.tokenUse));
    const own = rows
      .filter((row) => row[PRESENT] === true)
      .map(({ [CALLER]: _c, [PRESENT]: _p, [ORDINAL]: _o, ...rest }) => rest);
    return { principal, rows: own };
  };
  const execute = async (query: SQLWrapper | string) => {
    if (verdict || !(query instanceof SQL)) return target.execute(query);
    const outcome = firstStatement(query);
    verdict = outcome.then((o) => o.principal);
    // A statement that failed (not a verdict on the caller) leaves the verdict to a lookup, for the error's answer.
    verdict.catch((err: unknown) => {
      if (!(err instanceof ServiceError)) verdict = undefined;
    });
    return { rows: (await outcome).rows };
  };
  const db = new Proxy(target, {
    get: (obj, prop, receiver) => (prop === 'execute' ? execute : Reflect.get(obj, prop, receiver)),
  });
  return { db, settle };
}
