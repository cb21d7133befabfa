// What a database error means for the caller, decided by its class, not by a list of cases someone thought of:
// - `unavailable`: the database cannot be reached or is not accepting work right now (down, restarting, failing
//   over, resuming from auto-pause, out of connections, throttled). 503 database_unavailable; retry later.
// - `busy`: it gave up on this statement for a reason of load (statement or lock timeout, deadlock, serialization
//   failure). 503 database_busy; retrying succeeds.
// - undefined: anything else (a bug, a constraint): 500, logged with its request id.
// Drivers wrap each other's errors (drizzle wraps pg's and the Data API's), so every error of the cause chain counts.

export type DatabaseFault = 'unavailable' | 'busy';

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  syscall?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: { throttling?: unknown };
}

/** The error and its causes (drizzle's wrapper, the driver's error), and the members of an AggregateError. */
function* chain(err: unknown, depth = 0): Generator<ErrorLike> {
  if (!err || typeof err !== 'object' || depth > 8) return;
  yield err as ErrorLike;
  if (err instanceof AggregateError) for (const e of err.errors) yield* chain(e, depth + 1);
  yield* chain((err as ErrorLike).cause, depth + 1);
}

// The RDS Data API reports a failed statement as DatabaseErrorException (BadRequestException on Serverless v1)
// whose message ends in "SQLState: <code>": the SQLSTATE reaches the caller only inside that text.
const DATA_API_SQLSTATE = /SQLState: ([0-9A-Z]{5})\s*$/;
const DATA_API_STATEMENT_ERRORS = new Set(['DatabaseErrorException', 'BadRequestException']);

/** The PostgreSQL SQLSTATE of a failed statement, through drizzle's wrapper, on every driver. */
export function sqlState(err: unknown): string | undefined {
  for (const e of chain(err)) {
    const { code, name, message } = e;
    // A Node system error's code is an errno name (EPIPE has five letters too), not a SQLSTATE.
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !('errno' in e)) return code;
    if (typeof name === 'string' && DATA_API_STATEMENT_ERRORS.has(name) && typeof message === 'string') {
      const match = DATA_API_SQLSTATE.exec(message);
      if (match) return match[1];
    }
  }
  return undefined;
}

/** A SQLSTATE by its class (PostgreSQL Appendix A): which ones are the database's state rather than the request's. */
function faultOfState(state: string): DatabaseFault | undefined {
  const cls = state.slice(0, 2);
  // 08 connection exception; 53 insufficient resources (53300 too many connections, disk full, out of memory);
  // 57P0x operator intervention (shutdown, crash, cannot connect now, database dropped); 55000 "not accepting
  // connections" (ALLOW_CONNECTIONS false, a failover in progress).
  if (cls === '08' || cls === '53' || state.startsWith('57P') || state === '55000') return 'unavailable';
  // 57014 canceled by statement_timeout; 55P03 lock_timeout; 40001 serialization failure; 40P01 deadlock.
  if (state === '57014' || state === '55P03' || state === '40001' || state === '40P01') return 'busy';
  return undefined;
}

// A socket that could not be opened or was lost: whatever the errno (refused, reset, timed out, no route, no DNS).
const SOCKET_SYSCALLS = new Set(['connect', 'getaddrinfo', 'read', 'write']);
const NETWORK_ERRNO = /^E(CONN|HOST|NET|PIPE|TIMEDOUT|AI_|NOTFOUND)/;
// The drivers' own words for a connection that is gone (node-postgres and its pool, PGlite after close).
const CONNECTION_LOST = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:refused|reset|closed)/i,
  /not queryable/i,
  /Communications link failure/i,
  /PGlite is closed/i,
];
// The RDS Data API's own: the cluster resuming from auto-pause, unavailable, throttling the caller.
const DATA_API_UNAVAILABLE = new Set([
  'DatabaseResumingException',
  'DatabaseUnavailableException',
  'ServiceUnavailableError',
  'InternalServerErrorException',
  'ThrottlingException',
  'TooManyRequestsException',
]);

/** Classifies an error thrown while talking to the database (see the top of this file). */
export function databaseFault(err: unknown): DatabaseFault | undefined {
  const state = sqlState(err);
  if (state) return faultOfState(state);
  for (const e of chain(err)) {
    const { code, name, message, syscall } = e;
    if (
      typeof code === 'string' &&
      (NETWORK_ERRNO.test(code) || (typeof syscall === 'string' && SOCKET_SYSCALLS.has(syscall)))
    ) {
      return 'unavailable';
    }
    if (typeof name === 'string' && DATA_API_UNAVAILABLE.has(name)) return 'unavailable';
    if (name === 'StatementTimeoutException') return 'busy';
    // The transaction's connection was lost (terminated, failed over): the Data API no longer knows its id.
    if (
      name === 'BadRequestException' &&
      typeof message === 'string' &&
      /transaction \S+ is not found/i.test(message)
    ) {
      return 'unavailable';
    }
    // An AWS service's own failure (5xx, server fault) or throttling, whatever its name.
    const status = e.$metadata?.httpStatusCode;
    if (e.$fault === 'server' || (typeof status === 'number' && status >= 500) || e.$retryable?.throttling) {
      return 'unavailable';
    }
    if (typeof message === 'string' && CONNECTION_LOST.some((re) => re.test(message))) return 'unavailable';
  }
  return undefined;
}

/** Whether the statement was refused because the database is unavailable (see databaseFault). */
export const isDatabaseUnavailable = (err: unknown): boolean => databaseFault(err) === 'unavailable';

/**
 * Aurora Serverless v2 at zero capacity answers DatabaseResumingException for ~15 s; the SDK does not retry it.
 * (Here rather than in data-api-client.ts, so that classifying an error never loads the RDS Data API client.)
 */
export function isDatabaseResuming(err: unknown): boolean {
  for (const { name } of chain(err)) if (name === 'DatabaseResumingException') return true;
  return false;
}
