/**
 * Aurora Serverless v2 at zero capacity answers DatabaseResumingException for ~15 s; the SDK does not retry it.
 * (Here rather than in data-api-client.ts, so that classifying an error never loads the RDS Data API client.)
 */
export function isDatabaseResuming(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const { name, cause } = e as { name?: unknown; cause?: unknown };
    if (name === 'DatabaseResumingException') return true;
    e = cause;
  }
  return false;
}

// Connection-level failures: the database is down, restarting, unreachable or out of connections.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);
const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:refused|reset|closed)/i,
  /Communications link failure/i,
  /PGlite is closed/i,
];
const UNAVAILABLE_NAMES = new Set([
  'ServiceUnavailableError',
  'InternalServerErrorException',
  'ThrottlingException',
]);

/** Walks the cause chain (drizzle wraps driver errors) to decide whether the database itself is unavailable. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (isDatabaseResuming(err)) return true;
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const { code, name, message, cause } = e as {
      code?: unknown;
      name?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnavailable)) return true;
    e = cause;
  }
  return false;
}

// A statement the database gave up on for reasons of load, not of the request: a statement or lock timeout, a
// deadlock, a serialization failure. Retrying later succeeds, so these are 503, not 500.
const BUSY_STATES = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '40P01', // deadlock_detected
  '40001', // serialization_failure
]);

/** Whether the database refused a statement for a transient reason (BUSY_STATES) that a retry can get past. */
export function isDatabaseBusy(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && BUSY_STATES.has(state);
}

// The RDS Data API reports a failed statement as DatabaseErrorException (BadRequestException on Serverless v1)
// whose message ends in "SQLState: <code>": the SQLSTATE reaches the caller only inside that text.
const DATA_API_SQLSTATE = /SQLState: ([0-9A-Z]{5})\s*$/;
const DATA_API_STATEMENT_ERRORS = new Set(['DatabaseErrorException', 'BadRequestException']);

/** The PostgreSQL SQLSTATE of a failed statement, through drizzle's wrapper, on every driver. */
export function sqlState(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const { code, name, message, cause } = e as {
      code?: unknown;
      name?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    if (typeof name === 'string' && DATA_API_STATEMENT_ERRORS.has(name) && typeof message === 'string') {
      const match = DATA_API_SQLSTATE.exec(message);
      if (match) return match[1];
    }
    e = cause;
  }
  return undefined;
}
