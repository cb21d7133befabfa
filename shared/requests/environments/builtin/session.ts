// The contract of a role session, whatever the driver (session-postgres.ts, session-pglite.ts,
// session-data-api.ts; drivers.ts picks one): what it is given (SessionOptions) and returns (RawResult), the setup
// that prepares its transaction and re-checks, in that same transaction, that the request is active (the gate), and
// what its errors mean (databaseError, and a failed gate as EnvironmentInactiveError).
import { EnvironmentInactiveError } from '../types.ts';
import { quoteIdent, quoteLiteral } from './view-sql.ts';

/** Rows as arrays and their columns, as a session returns them. */
export interface RawResult {
  rows: unknown[][];
  columns: Array<{ name: string; type: string }>;
  /** The session stopped keeping rows: the row or byte budget of `keep` ran out while fetching. */
  truncated: boolean;
}

/** Who runs the statement, and how. */
export interface SessionOptions {
  role: string;
  schema: string;
  timeoutMs: number;
  /**
   * Assume the role only while this request is active, checked in the same transaction just before the statement
   * runs; otherwise nothing runs and the session throws EnvironmentInactiveError.
   */
  requestId?: string;
  /** Stop keeping rows once this many rows or wire bytes have arrived (drivers that stream: node-postgres). */
  keep?: { maxRows: number; maxBytes: number };
  /** Plan the statement first and refuse it when the planner's estimated cost is above this (PGlite). */
  maxPlanCost?: number;
}

/**
 * A session runs one statement as the request's role, in a read-only transaction, with a statement timeout and a
 * search_path of the request's schema, sends the statement alone in its own protocol message (extended protocol, or
 * one Data API call), and rolls back. Each layer holds on its own when the SQL guard is bypassed.
 */
export type RoleSession = (statement: string, options: SessionOptions) => Promise<RawResult>;

const INACTIVE_MARK = 'acp: request is ';

/**
 * What prepares the transaction, our own text only (names derive from the request's UUID, numbers are integers): the
 * role, the statement timeout, a search_path that puts the request's schema before the catalogs (so an unqualified
 * name never resolves into pg_catalog first) and pg_temp last, and a read-only transaction. With a request id it first
 * checks, in this transaction, that the request is still active: a request in another state fails the statement with
 * an error naming the state, which aborts the transaction, so nothing after it can run; a missing request returns no
 * row (the session checks that).
 *
 * `statements`: plain SET LOCAL statements after the check, for one simple-protocol message (node-postgres, PGlite;
 * SET is the cheapest way there). `single`: all of it in one SELECT, for drivers that take one statement per call
 * (the Data API).
 */
export function sessionSetupSql(
  options: Pick<SessionOptions, 'role' | 'schema' | 'timeoutMs' | 'requestId'>,
  form: 'statements' | 'single' = 'statements',
): string {
  const timeout = Math.max(1, Math.floor(options.timeoutMs));
  const path = `${quoteIdent(options.schema)}, pg_catalog, pg_temp`;
  if (options.requestId !== undefined && !/^[0-9a-f-]{36}$/i.test(options.requestId)) {
    throw new Error('request id is not a UUID');
  }
  const id = options.requestId ? `'${options.requestId}'::uuid` : undefined;
  // The ELSE branch depends on a column, so the planner cannot fold it into an error at plan time.
  const refuse = (status: string) => `('${INACTIVE_MARK}' || ${status})::int`;
  if (form === 'statements') {
    const settings = [
      `SET LOCAL ROLE ${quoteIdent(options.role)}`,
      `SET LOCAL statement_timeout = ${timeout}`,
      `SET LOCAL search_path = ${path}`,
      'SET TRANSACTION READ ONLY',
    ];
    const gate = id
      ? [
          `SELECT CASE WHEN status = 'active' THEN 1 ELSE ${refuse('status')} END AS ready FROM requests WHERE id = ${id}`,
        ]
      : [];
    return [...gate, ...settings].join('; ');
  }
  const settings = [
    `set_config('role', ${quoteLiteral(options.role)}, true)`,
    `set_config('statement_timeout', '${timeout}', true)`,
    `set_config('search_path', ${quoteLiteral(path)}, true)`,
    `set_config('transaction_read_only', 'on', true)`,
  ].join(' || ');
  if (!id) return `SELECT ${settings} AS ready`;
  return `SELECT CASE WHEN g.status = 'active' THEN ${settings} ELSE ${refuse("coalesce(g.status, 'missing')")}::text END AS ready
    FROM (SELECT (SELECT status FROM requests WHERE id = ${id}) AS status) AS g`;
}

/** The gate's answer in the results of the setup message: no row means the request is gone. */
export function checkGate(results: unknown, options: SessionOptions): void {
  if (!options.requestId) return;
  const list = (Array.isArray(results) ? results : [results]) as Array<{
    fields?: Array<{ name: string }>;
    rows?: unknown[];
  }>;
  const gate = list.find((r) => r.fields?.[0]?.name === 'ready');
  if (!gate || (gate.rows?.length ?? 0) !== 1) throw new EnvironmentInactiveError('the request is missing');
}

/**
 * The SQLSTATE and message the database gave for a failed statement, on any driver: node-postgres and PGlite carry
 * `code`; the Data API says it only inside its message (`ERROR: <message>; SQLState: <code>`). Wrappers (drizzle's,
 * whose message quotes the statement) are looked through, never read.
 */
export function databaseError(err: unknown): { code?: string; message: string } {
  for (let e: unknown = err, d = 0; e && d < 6; d++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
      return { code, message: String(message ?? '') };
    const m =
      typeof message === 'string'
        ? /^ERROR:\s*([\s\S]*?)(?:\n[\s\S]*)?;\s*SQLState:\s*([0-9A-Z]{5})$/.exec(message)
        : null;
    if (m) return { code: m[2] as string, message: m[1] as string };
    e = (e as { cause?: unknown }).cause;
  }
  return { message: '' };
}

/** A failure of the setup statement because the request is no longer active becomes EnvironmentInactiveError. */
export function inactiveOr(err: unknown): unknown {
  const { message } = databaseError(err);
  const at = message.indexOf(INACTIVE_MARK);
  if (at < 0) return err;
  const status = /^[a-z_]+/.exec(message.slice(at + INACTIVE_MARK.length))?.[0] ?? 'not active';
  return new EnvironmentInactiveError(`the request is ${status}`);
}
