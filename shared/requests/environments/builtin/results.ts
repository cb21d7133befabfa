// The form and the bounds of a query's result, the same on every driver. Results are capped where they are produced
// (cappedStatement: LIMIT max_rows + 1 and no row over max_bytes) and while they are fetched (node-postgres counts
// bytes as rows arrive, session-postgres.ts; on the Data API the database keeps the running total,
// windowedStatement); then capRows normalizes the values (instants as ISO 8601, bytea as hex, int8 as a number when
// it is exactly one) and keeps what fits in max_rows and max_bytes of JSON.
import type { QueryLimits } from '../types.ts';
import { databaseError } from './session.ts';

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

/** Columns as a session reports them: the name and the type name (TYPE_NAMES) of each field. */
export const columnsOf = (fields: Array<{ name: string; dataTypeID: number }>) =>
  fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.dataTypeID] ?? String(f.dataTypeID) }));

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

const ROW_TOO_LARGE_MARK = 'acp: a result row is larger than query.max_bytes';

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
