// The builtin environment provider: inside the service's own PostgreSQL, a schema per request holding one view per
// dataset (only the allowed columns, only the rows its filter groups allow, only its declared joins), and a role per
// request that may read those views and nothing else. Sources resolve through the catalog: a dataset's
// {source.name, source.table} must match a catalog entry whose target_location names the real `schema.table`, so an
// approved scope can reach only what the catalog exposes. Teardown drops the schema and the role. Every provision and
// teardown is audited with source env-svc in the transaction of its DDL. Names inside an environment are lower case.
//
// Queries run through a session per driver (roleSessionFor): node-postgres pipelines BEGIN + setup, the statement and
// ROLLBACK in one round trip; PGlite runs them in one exclusive transaction, planning combined statements first since
// it cannot stop a statement; the RDS Data API runs them as a Data API transaction, one statement per call. The setup
// re-checks that the request is active, in the same transaction. Results are capped where they are produced
// (cappedStatement: LIMIT max_rows + 1 and no row over max_bytes) and while they are fetched (node-postgres counts
// bytes as rows arrive; on the Data API the database keeps the running total, windowedStatement).
import { and, eq, sql, TransactionRollbackError } from 'drizzle-orm';
import type { Database, Db } from '../../db/database.ts';
import { catalogEntries } from '../../db/schema.ts';
import { badRequest } from '../../http/errors.ts';
import type { Dataset, FilterCondition, FilterGroup, Scope, TunnelView } from '../../schemas/requests.ts';
import { COLUMN, JOIN_ON, viewColumnName } from '../../schemas/requests.ts';
import { recordAudit } from '../audit.ts';
import type { CheckedStatement } from '../query-proxy-guard.ts';
import type { RequestRow } from '../requests.ts';
import {
  EnvironmentInactiveError,
  type EnvironmentProvider,
  type EnvironmentQuerier,
  type Provisioned,
  type QueryLimits,
  type QueryResult,
  type QueryTarget,
} from './types.ts';

export const ENV_ACTOR = { id: 'env-svc', email: 'env-svc@builtin', ipAddress: '' };

/** Schemas no request may read from, whatever the catalog says. */
const FORBIDDEN_SCHEMAS = new Set(['public', 'pg_catalog', 'information_schema', 'pg_toast']);

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export function quoteLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('filter value is not a finite number');
    return String(value);
  }
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new Error('filter value contains a NUL character');
    // standard_conforming_strings is on (the default since 9.1): only the quote needs doubling.
    return `'${value.replace(/'/g, "''")}'`;
  }
  throw new Error('filter value must be a string, number, boolean or null');
}

/** The schema and role of a request's environment. */
export function environmentNames(requestId: string) {
  const hex = requestId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error('request id is not a UUID');
  return { schema: `req_${hex}`, role: `req_${hex}_reader` };
}

const OPS: Record<FilterCondition['op'], string> = {
  eq: '=',
  neq: '<>',
  lt: '<',
  lte: '<=',
  gt: '>',
  gte: '>=',
  in: 'IN',
  not_in: 'NOT IN',
  like: 'LIKE',
  ilike: 'ILIKE',
  is_null: 'IS NULL',
  is_not_null: 'IS NOT NULL',
};

type Aliases = Map<string, string>;

function columnRef(column: string, aliases: Aliases): string {
  const m = COLUMN.exec(column);
  if (!m) throw new Error(`bad column ${column}`);
  const [, qualifier, name] = m as unknown as [string, string | undefined, string];
  const alias = qualifier ? aliases.get(qualifier.toLowerCase()) : 't0';
  if (!alias) throw new Error(`column ${column} names no declared join`);
  return `${alias}.${quoteIdent(name)}`;
}

function conditionSql(c: FilterCondition, aliases: Aliases): string {
  const col = columnRef(c.column, aliases);
  switch (c.op) {
    case 'is_null':
    case 'is_not_null':
      return `${col} ${OPS[c.op]}`;
    case 'in':
    case 'not_in': {
      const list = c.value as unknown[];
      if (list.length === 0) return c.op === 'in' ? 'FALSE' : 'TRUE';
      return `${col} ${OPS[c.op]} (${list.map(quoteLiteral).join(', ')})`;
    }
    default:
      return `${col} ${OPS[c.op]} ${quoteLiteral(c.value)}`;
  }
}

export function filterSql(group: FilterGroup, aliases: Aliases, depth = 0): string {
  if (depth > 10) throw new Error('filter groups nest deeper than 10');
  const parts = group.conditions.map((item) =>
    'condition' in item ? conditionSql(item.condition, aliases) : filterSql(item.group, aliases, depth + 1),
  );
  if (parts.length === 0) return 'TRUE';
  return `(${parts.join(group.logic === 'or' ? ' OR ' : ' AND ')})`;
}

export type ResolveTable = (source: { name: string; table?: string | undefined }) => Promise<string>;

/**
 * Names inside an environment are lower case, what PostgreSQL folds unquoted identifiers to: a dataset `EuOrders` is
 * the view `euorders`, read as `SELECT * FROM EuOrders` or `euorders`, and the SQL guard checks the same folded
 * name. Source tables and columns keep their exact case (they are quoted where they are read).
 */
export const viewName = (d: Pick<Dataset, 'namespace'>): string => d.namespace.toLowerCase();

/** The CREATE VIEW of one dataset, with every name quoted and every value a quoted literal. */
export async function datasetViewSql(schema: string, d: Dataset, resolve: ResolveTable): Promise<string> {
  const aliases: Aliases = new Map();
  aliases.set(d.namespace.toLowerCase(), 't0');
  if (d.source.table) aliases.set(d.source.table.toLowerCase(), 't0');
  const from = [`${await resolve(d.source)} AS t0`];
  for (const [i, j] of d.joins.entries()) {
    const alias = `t${i + 1}`;
    aliases.set(j.namespace.toLowerCase(), alias);
    if (j.source.table && !aliases.has(j.source.table.toLowerCase())) {
      aliases.set(j.source.table.toLowerCase(), alias);
    }
    const m = JOIN_ON.exec(j.on);
    if (!m) throw new Error(`join ${j.namespace}: bad on`);
    const [, q1, c1, q2, c2] = m as unknown as [
      string,
      string,
      string | undefined,
      string,
      string | undefined,
    ];
    // `a.x = b.y` or `x = y` (left: the dataset, right: the join).
    const left = c1 === undefined ? `t0.${quoteIdent(q1)}` : columnRef(`${q1}.${c1}`, aliases);
    const right = c2 === undefined ? `${alias}.${quoteIdent(q2)}` : columnRef(`${q2}.${c2}`, aliases);
    from.push(
      `${j.type === 'left' ? 'LEFT JOIN' : 'JOIN'} ${await resolve(j.source)} AS ${alias} ON ${left} = ${right}`,
    );
  }
  const select = d.columns.map((c) => `${columnRef(c, aliases)} AS ${quoteIdent(viewColumnName(c))}`);
  const where = d.filters ? filterSql(d.filters, aliases) : 'TRUE';
  return `CREATE VIEW ${quoteIdent(schema)}.${quoteIdent(viewName(d))} WITH (security_barrier = true) AS SELECT ${select.join(', ')} FROM ${from.join(' ')} WHERE ${where}`;
}

function catalogResolver(db: Db): ResolveTable {
  return async (source) => {
    if (!source.table) throw new Error(`source ${source.name} names no table`);
    const [entry] = await db
      .select({ location: catalogEntries.targetLocation })
      .from(catalogEntries)
      .where(and(eq(catalogEntries.datasourceName, source.name), eq(catalogEntries.targetName, source.table)))
      .limit(1);
    if (!entry) throw new Error(`no catalog entry for ${source.name}.${source.table}`);
    const m = /^([A-Za-z_][A-Za-z0-9_]{0,62})\.([A-Za-z_][A-Za-z0-9_]{0,62})$/.exec(entry.location);
    if (!m) throw new Error(`catalog entry ${source.name}.${source.table} has no schema.table location`);
    const [, schema, table] = m as unknown as [string, string, string];
    if (FORBIDDEN_SCHEMAS.has(schema.toLowerCase()) || /^(req_|pg_)/i.test(schema)) {
      throw new Error(
        `catalog entry ${source.name}.${source.table} points into a schema requests may not read`,
      );
    }
    return `${quoteIdent(schema)}.${quoteIdent(table)}`;
  };
}

const datasetsOf = (scope: Scope): Dataset[] => scope.datasources.flatMap((ds) => ds.datasets);

/** Column type names of the OIDs a result commonly carries; anything else is reported by its OID. */
const TYPE_NAMES: Record<number, string> = {
  16: 'bool',
  17: 'bytea',
  20: 'int8',
  21: 'int2',
  23: 'int4',
  25: 'text',
  114: 'json',
  700: 'float4',
  701: 'float8',
  1043: 'varchar',
  1082: 'date',
  1114: 'timestamp',
  1184: 'timestamptz',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
};

const PG_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00(?::00)?|Z)?$/;

/**
 * A timestamp, timestamptz or date as PostgreSQL writes it in the UTC sessions the service opens
 * (`2025-06-01 05:00:00.123456+00`, `2025-06-01`), as ISO 8601 in UTC with milliseconds, the form Date#toISOString
 * gives: by string, without a Date per value (formatting Dates was the costliest part of a result's normalization).
 * Anything else (other offsets, BC, years past 9999, infinity) goes through Date; what it cannot read is null.
 */
export function isoTimestamp(text: string): string | null {
  const m = PG_TIMESTAMP.exec(text);
  if (m) return `${m[1]}T${m[2] ?? '00:00:00'}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00.000Z`;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
/** Type OIDs of timestamptz, timestamp and date, which drivers are told to leave as text for isoTimestamp. */
export const TIME_TYPE_OIDS = [1184, 1114, 1082] as const;

/**
 * A value as the result's JSON carries it, the same on every driver: instants as ISO 8601, bytea as \\x hex, int8
 * as a number when it is exactly one (node-postgres gives int8 as text, PGlite as a number) and as text otherwise.
 */
export function normalizeValue(value: unknown, type?: string): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (typeof value === 'bigint')
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'string' && (type === 'timestamptz' || type === 'timestamp' || type === 'date')) {
    return isoTimestamp(value);
  }
  if (type === 'int8' && typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return value;
}

/** Caps a result at maxRows rows and maxBytes bytes of JSON; `types` are the columns' types, for normalizeValue. */
export function capRows(
  rows: unknown[][],
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
  types: readonly string[] = [],
): { rows: unknown[][]; truncated: boolean } {
  const kept = rows.length > limits.maxRows ? rows.slice(0, limits.maxRows) : rows;
  const normalized = kept.map((row) => row.map((v, i) => normalizeValue(v, types[i])));
  // The common case in one measure: everything fits.
  if (Buffer.byteLength(JSON.stringify(normalized)) <= limits.maxBytes) {
    return { rows: normalized, truncated: kept.length < rows.length };
  }
  const out: unknown[][] = [];
  let bytes = 2;
  for (const row of normalized) {
    bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes > limits.maxBytes) return { rows: out, truncated: true };
    out.push(row);
  }
  return { rows: out, truncated: true };
}

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
const ROW_TOO_LARGE_MARK = 'acp: a result row is larger than query.max_bytes';

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
function checkGate(results: unknown, options: SessionOptions): void {
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
function inactiveOr(err: unknown): unknown {
  const { message } = databaseError(err);
  const at = message.indexOf(INACTIVE_MARK);
  if (at < 0) return err;
  const status = /^[a-z_]+/.exec(message.slice(at + INACTIVE_MARK.length))?.[0] ?? 'not active';
  return new EnvironmentInactiveError(`the request is ${status}`);
}

/** Whether the error is the per-row size check of cappedStatement failing. */
export const isRowTooLarge = (err: unknown): boolean =>
  databaseError(err).message.includes(ROW_TOO_LARGE_MARK);

/**
 * The requester's statement, capped where it runs: at most maxRows + 1 rows (one more tells that there were more),
 * and no row larger than maxBytes (pg_column_size, checked before the row is sent; a larger row fails the statement
 * with ROW_TOO_LARGE_MARK, so a client never has to buffer one). The running total is enforced while fetching.
 */
export function cappedStatement(
  statement: string,
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
): string {
  return `SELECT * FROM (SELECT * FROM (\n${statement}\n) AS q LIMIT ${limits.maxRows + 1}) AS q
    WHERE CASE WHEN pg_column_size(q) <= ${limits.maxBytes} THEN true
      ELSE ('${ROW_TOO_LARGE_MARK} (' || pg_column_size(q) || ' bytes)')::int IS NULL END`;
}

/**
 * The same for the Data API, which answers a call in one piece (and refuses answers over 1 MiB): on top of the caps
 * above, the database keeps a running total of the rows' text size and sends only the rows within `budget`, plus
 * the number of rows there were (the last column), which tells whether some were left out.
 */
export function windowedStatement(
  statement: string,
  limits: Pick<QueryLimits, 'maxRows' | 'maxBytes'>,
  budget: number,
): string {
  return `SELECT (s.r).*, s.n AS acp_row_total FROM (
      SELECT q AS r, sum(octet_length(q::text)) OVER (ROWS UNBOUNDED PRECEDING) AS b, count(*) OVER () AS n
      FROM (${cappedStatement(statement, limits)}) AS q) AS s
    WHERE s.b <= ${budget}`;
}
/** The Data API's own limit is 1 MiB of JSON for the whole answer; keep the rows' text well under it. */
export const DATA_API_RESULT_BUDGET = 512 * 1024;

/**
 * PGlite cannot stop a running statement, and it runs on the service's own thread. Statements that combine relations
 * are planned first (EXPLAIN) and refused above this estimated cost, in PostgreSQL's cost units: measured on the demo
 * data, 20-50 ms of PGlite work per 1000 units, so about one to three seconds at most (a 4-way cross join of a
 * 120-row view is 1.8M units, ~35 s). Provisioning ANALYZEs the sources on PGlite so the estimates mean something.
 */
export const PGLITE_MAX_PLAN_COST = 50_000;

interface DataRowMessage {
  length: number;
}
interface PgQueryResult {
  rows: unknown[][];
  fields: Array<{ name: string; dataTypeID: number }>;
}
interface PgPoolClient {
  pipeline: boolean;
  connection?: { stream?: { cork(): void; uncork(): void } };
  query(config: object): Promise<unknown>;
  query(text: string): Promise<unknown>;
  release(err?: boolean): void;
}
interface PgPool {
  connect(): Promise<PgPoolClient>;
}
interface PgliteTx {
  query(
    text: string,
    params?: unknown[],
    options?: { rowMode?: 'array'; parsers?: Record<number, (value: string) => unknown> },
  ): Promise<{ rows: unknown[]; fields: Array<{ name: string; dataTypeID: number }> }>;
  exec(text: string): Promise<unknown>;
  rollback(): Promise<void>;
}
interface Pglite {
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
}

const columnsOf = (fields: Array<{ name: string; dataTypeID: number }>) =>
  fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.dataTypeID] ?? String(f.dataTypeID) }));

type CappedQueryClass = new (
  config: { text: string; rowMode: 'array'; queryMode: 'extended' },
  keep: SessionOptions['keep'],
  callback: (err: Error | null, result: PgQueryResult) => void,
) => { truncated: boolean };

let cappedQueryClass: Promise<CappedQueryClass> | undefined;
/**
 * node-postgres' Query with a running budget: each DataRow message is counted as it arrives (its wire length), and
 * once the rows or bytes of `keep` are used up the rest is dropped unparsed, so memory stays within the budget
 * (plus one row, which cappedStatement bounds) however large the result is.
 */
function loadCappedQuery(): Promise<CappedQueryClass> {
  cappedQueryClass ??= import('pg').then(({ default: pg }) => {
    // Timestamps and dates stay text (normalizeValue formats them); everything else parses as usual.
    const textTimes = {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        (TIME_TYPE_OIDS as readonly number[]).includes(oid)
          ? (v: string) => v
          : pg.types.getTypeParser(oid, format ?? 'text'),
    };
    const Query = pg.Query as unknown as new (
      config: object,
    ) => {
      handleDataRow(msg: DataRowMessage): void;
    };
    class CappedQuery extends Query {
      truncated = false;
      #rows = 0;
      #bytes = 0;
      readonly #keep: SessionOptions['keep'];
      constructor(
        config: { text: string; rowMode: 'array'; queryMode: 'extended' },
        keep: SessionOptions['keep'],
        callback: (err: Error | null, result: PgQueryResult) => void,
      ) {
        super({ ...config, callback, types: textTimes });
        this.#keep = keep;
      }
      override handleDataRow(msg: DataRowMessage): void {
        if (this.truncated) return;
        if (this.#keep) {
          this.#bytes += msg.length;
          if (this.#rows >= this.#keep.maxRows || this.#bytes > this.#keep.maxBytes) {
            this.truncated = true;
            return;
          }
        }
        this.#rows += 1;
        super.handleDataRow(msg);
      }
    }
    return CappedQuery;
  });
  return cappedQueryClass;
}

/**
 * node-postgres writes each protocol message with its own write, with TCP_NODELAY: three pipelined queries would be
 * a dozen small packets, each waking the server. Messages issued inside `fn` leave in one write instead.
 */
function corked<T>(conn: PgPoolClient, fn: () => T): T {
  const stream = conn.connection?.stream;
  stream?.cork();
  try {
    return fn();
  } finally {
    stream?.uncork();
  }
}

/** node-postgres: BEGIN with the setup, the statement, and ROLLBACK, pipelined in one round trip (one write). */
function postgresSession(pool: PgPool): RoleSession {
  return async (statement, options) => {
    const CappedQuery = await loadCappedQuery();
    const conn = await pool.connect();
    let clean = false;
    try {
      // Pipeline mode: the three messages leave together and are answered in order. The first is our own text only
      // (BEGIN and the setup, simple protocol); if it fails, the transaction is aborted and the statement, alone in
      // its extended-protocol message, is refused unexecuted (25P02).
      conn.pipeline = true;
      let query: { truncated: boolean } | undefined;
      const sent = corked(conn, () => {
        const setup = conn.query(`BEGIN TRANSACTION READ ONLY; ${sessionSetupSql(options)}`);
        const result = new Promise<PgQueryResult>((resolve, reject) => {
          query = new CappedQuery(
            { text: statement, rowMode: 'array', queryMode: 'extended' },
            options.keep,
            (err, res) => (err ? reject(err) : resolve(res)),
          );
          void conn.query(query);
        });
        return [setup, result, conn.query('ROLLBACK')] as const;
      });
      const [s, r, rb] = await Promise.allSettled(sent);
      // After ROLLBACK the connection is back to its idle state, whatever happened before it.
      clean = rb.status === 'fulfilled';
      if (s.status === 'rejected') throw inactiveOr(s.reason);
      checkGate(s.value, options);
      if (r.status === 'rejected') throw r.reason;
      return { rows: r.value.rows, columns: columnsOf(r.value.fields), truncated: query?.truncated ?? false };
    } finally {
      conn.pipeline = false;
      conn.release(!clean);
    }
  };
}

const TEXT_TIMES: Record<number, (value: string) => string> = Object.fromEntries(
  TIME_TYPE_OIDS.map((oid) => [oid, (v: string) => v]),
);

/** PGlite: one exclusive transaction (nothing else runs on the single connection meanwhile). */
function pgliteSession(pglite: Pglite): RoleSession {
  return async (statement, options) => {
    try {
      return await pglite.transaction(async (tx) => {
        checkGate(await tx.exec(sessionSetupSql(options)), options);
        if (options.maxPlanCost !== undefined) {
          const plan = await tx.query(`EXPLAIN (FORMAT JSON) ${statement}`, [], { rowMode: 'array' });
          const cost = planCost(plan.rows[0]?.[0 as never]);
          if (cost > options.maxPlanCost) {
            await tx.rollback();
            throw badRequest(
              'query_too_expensive',
              `The statement's estimated cost (${Math.round(cost)}) is above what this local database runs (${options.maxPlanCost}): it cannot stop a running statement. Narrow it (fewer joins, a WHERE, a LIMIT).`,
            );
          }
        }
        // PGlite's query() uses the extended protocol: several statements in one message are refused.
        const result = await tx.query(statement, [], { rowMode: 'array', parsers: TEXT_TIMES });
        await tx.rollback();
        return { rows: result.rows as unknown[][], columns: columnsOf(result.fields), truncated: false };
      });
    } catch (err) {
      throw inactiveOr(err);
    }
  };
}

function planCost(value: unknown): number {
  const plan = (typeof value === 'string' ? JSON.parse(value) : value) as Array<{
    Plan?: { 'Total Cost'?: number };
  }>;
  return Number(plan?.[0]?.Plan?.['Total Cost'] ?? Number.POSITIVE_INFINITY);
}

interface DataApiField {
  isNull?: boolean;
  stringValue?: string;
  longValue?: number;
  doubleValue?: number;
  booleanValue?: boolean;
  blobValue?: Uint8Array;
  arrayValue?: DataApiArray;
}
interface DataApiArray {
  stringValues?: unknown[];
  longValues?: unknown[];
  doubleValues?: unknown[];
  booleanValues?: unknown[];
  arrayValues?: DataApiArray[];
}
interface DataApiAnswer {
  records?: DataApiField[][];
  columnMetadata?: Array<{ name?: string; typeName?: string }>;
}

const arrayValue = (a: DataApiArray): unknown[] =>
  a.arrayValues?.map(arrayValue) ?? a.stringValues ?? a.longValues ?? a.doubleValues ?? a.booleanValues ?? [];

/** A Data API value as node-postgres would give it (JSON parsed; timestamps stay text for normalizeValue). */
function dataApiValue(field: DataApiField, type: string): unknown {
  if (field.isNull) return null;
  if (field.stringValue !== undefined) {
    const v = field.stringValue;
    if (type === 'json' || type === 'jsonb') return JSON.parse(v);
    return v;
  }
  if (field.blobValue !== undefined) return field.blobValue;
  if (field.arrayValue !== undefined) return arrayValue(field.arrayValue);
  return field.longValue ?? field.doubleValue ?? field.booleanValue ?? null;
}

/**
 * RDS Data API: a Data API transaction (drizzle's, over the same client): the setup, then the statement, one call
 * each (one statement per call is how the Data API works), then RollbackTransaction.
 */
function dataApiSession(database: Database): RoleSession {
  return async (statement, options) => {
    let answer: DataApiAnswer | undefined;
    try {
      await database.db.transaction(async (tx) => {
        try {
          await tx.execute(sql.raw(sessionSetupSql(options, 'single')));
        } catch (err) {
          throw inactiveOr(err);
        }
        answer = (await tx.execute(sql.raw(statement))) as unknown as DataApiAnswer;
        tx.rollback();
      });
    } catch (err) {
      if (!(err instanceof TransactionRollbackError)) throw err;
    }
    const meta = answer?.columnMetadata ?? [];
    const columns = meta.map((c) => ({ name: c.name ?? '', type: c.typeName ?? '' }));
    const rows = (answer?.records ?? []).map((record) =>
      record.map((field, i) => dataApiValue(field, columns[i]?.type ?? '')),
    );
    return { rows, columns, truncated: false };
  };
}

/**
 * One parameterized statement of ours ($1, $2… placeholders) on the driver's own client, without the ORM's per-call
 * work (a third of the query path's usage write on PGlite). node-postgres prepares it under `name` once per
 * connection (a third of the write's time on PostgreSQL was planning it). node-postgres and PGlite only; undefined on
 * the Data API, whose parameters need the ORM's typing.
 */
export function rawExecutor(
  database: Database,
): ((name: string, text: string, params: unknown[]) => Promise<void>) | undefined {
  const client = (database.db as unknown as { $client: unknown }).$client;
  if (database.driver === 'postgres') {
    const pool = client as {
      query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
    };
    return async (name, text, values) => {
      await pool.query({ name, text, values });
    };
  }
  if (database.driver !== 'pglite') return undefined;
  const pglite = client as { query(text: string, params: unknown[]): Promise<unknown> };
  return async (_name, text, params) => {
    await pglite.query(text, params);
  };
}

export function roleSessionFor(database: Database): RoleSession {
  const client = (database.db as unknown as { $client: unknown }).$client;
  if (database.driver === 'postgres') return postgresSession(client as PgPool);
  if (database.driver === 'pglite') return pgliteSession(client as Pglite);
  return dataApiSession(database);
}

export function createBuiltinProvider(database: Database): EnvironmentProvider {
  const db = database.db;
  return {
    ...createBuiltinQuerier(database),
    async provision(request: RequestRow): Promise<Provisioned> {
      const { schema, role } = environmentNames(request.id);
      const resolveInCatalog = catalogResolver(db);
      const sources = new Set<string>();
      const resolve: ResolveTable = async (source) => {
        const table = await resolveInCatalog(source);
        sources.add(table);
        return table;
      };
      const views: string[] = [];
      for (const d of datasetsOf(request.scope as Scope))
        views.push(await datasetViewSql(schema, d, resolve));
      const now = new Date().toISOString();
      if (database.driver === 'pglite') {
        // PGlite has no autovacuum, so nothing keeps statistics; the plan-cost check before a query is only as
        // good as the planner's estimates. (A cheap ANALYZE of the sources the views read.)
        for (const table of sources) await db.execute(sql.raw(`ANALYZE ${table}`));
      }
      await db.transaction(async (tx) => {
        // Idempotent: a retry after a failure starts from nothing.
        await tx.execute(sql.raw(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`));
        await tx.execute(sql.raw(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
        await tx.execute(sql.raw(`CREATE SCHEMA ${quoteIdent(schema)}`));
        for (const view of views) await tx.execute(sql.raw(view));
        await tx.execute(
          sql.raw(`CREATE ROLE ${quoteIdent(role)} NOLOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE`),
        );
        await tx.execute(sql.raw(`GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`));
        await tx.execute(
          sql.raw(`GRANT SELECT ON ALL TABLES IN SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`),
        );
        // The service must be able to SET ROLE to it (a superuser already can).
        await tx.execute(sql.raw(`GRANT ${quoteIdent(role)} TO CURRENT_USER`));
        await recordAudit(tx, {
          actionType: 'environment.provisioned',
          actor: ENV_ACTOR,
          resourceType: 'request',
          resourceId: request.id,
          source: 'env-svc',
          environmentId: schema,
          environmentName: schema,
          appName: 'builtin',
          metadata: { role, views: datasetsOf(request.scope as Scope).map((d) => d.namespace) },
        });
      });
      const tunnel: TunnelView = {
        id: schema,
        provider: 'builtin',
        sidecar_name: '',
        status: 'ready',
        last_error: '',
        api_url: `/v1/requests/${request.id}/query`,
        edge_url: '',
        explorer_url: '',
        public_url: '',
        created_at: now,
        updated_at: now,
        credentials: [
          {
            id: role,
            type: 'database_role',
            username: role,
            secret_preview: '',
            is_active: true,
            use_count: 0,
            last_used_at: null,
          },
        ],
      };
      return { environmentId: schema, tunnel };
    },
    async teardown(request: RequestRow): Promise<void> {
      const { schema, role } = environmentNames(request.id);
      await db.transaction(async (tx) => {
        await tx.execute(sql.raw(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`));
        await tx.execute(sql.raw(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
        await recordAudit(tx, {
          actionType: 'environment.torn_down',
          actor: ENV_ACTOR,
          resourceType: 'request',
          resourceId: request.id,
          source: 'env-svc',
          environmentId: schema,
          environmentName: schema,
          appName: 'builtin',
          metadata: { role },
        });
      });
    },
  };
}

/**
 * The builtin provider's query side alone: what the query function builds, so that its bundle leaves out the
 * provisioning (views, roles, catalog lookups) of createBuiltinProvider.
 */
export function createBuiltinQuerier(database: Database): EnvironmentQuerier {
  const session = roleSessionFor(database);
  return {
    name: 'builtin',
    checksActive: true,
    withoutTimeout: database.driver === 'pglite',
    async query(
      request: QueryTarget,
      statement: CheckedStatement,
      limits: QueryLimits,
    ): Promise<QueryResult> {
      const { schema, role } = environmentNames(request.id);
      const started = performance.now();
      const options: SessionOptions = {
        role,
        schema,
        timeoutMs: limits.statementTimeoutMs,
        requestId: request.id,
      };
      let raw: RawResult;
      if (database.driver === 'data-api') {
        const budget = Math.min(limits.maxBytes, DATA_API_RESULT_BUDGET);
        raw = await session(windowedStatement(statement.text, limits, budget), options);
        // The last column is the number of rows there were; fewer came back when the byte budget ran out.
        const total = Number(raw.rows[0]?.at(-1) ?? 0);
        raw = {
          columns: raw.columns.slice(0, -1),
          rows: raw.rows.map((r) => r.slice(0, -1)),
          truncated: raw.rows.length < total,
        };
      } else {
        raw = await session(cappedStatement(statement.text, limits), {
          ...options,
          keep: { maxRows: limits.maxRows, maxBytes: limits.maxBytes },
          ...(database.driver === 'pglite' && statement.combines
            ? { maxPlanCost: PGLITE_MAX_PLAN_COST }
            : {}),
        });
      }
      const { rows, truncated } = capRows(
        raw.rows,
        limits,
        raw.columns.map((c) => c.type),
      );
      return {
        columns: raw.columns,
        rows,
        row_count: rows.length,
        truncated: truncated || raw.truncated,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
      };
    },
  };
}
