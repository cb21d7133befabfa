import type { SQL } from 'drizzle-orm';
import type { Db } from './database.ts';

/**
 * Reads one column of a raw statement's row as a driver returned it, and throws when the value is not of that kind.
 * The three drivers agree on the shape of a result ({rows}) but not on value types (node-postgres gives int8 and
 * numeric as strings, PGlite and the Data API numbers; the Data API gives json as a string), so each kind evens that
 * out here, once: raw statements should select text, numbers, booleans, or json.
 */
export type Column<T> = (value: unknown, name: string) => T;
/** The columns of a row: name → Column. */
export type RowShape = Readonly<Record<string, Column<unknown>>>;
export type RowOf<S extends RowShape> = {
  -readonly [K in keyof S]: S[K] extends Column<infer T> ? T : never;
};

const wrong = (name: string, kind: string, value: unknown): Error =>
  new TypeError(`column ${name}: expected ${kind}, got ${value === null ? 'null' : typeof value}`);

const text: Column<string> = (v, name) => {
  if (typeof v === 'string') return v;
  throw wrong(name, 'text', v);
};

/** int4/int8/numeric/float as a number, whichever of number, bigint or decimal text the driver gave. */
const number: Column<number> = (v, name) => {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint' || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)))) {
    return Number(v);
  }
  throw wrong(name, 'a number', v);
};

const bool: Column<boolean> = (v, name) => {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 't') return true;
  if (v === 'false' || v === 'f') return false;
  throw wrong(name, 'boolean', v);
};

/**
 * A json or jsonb value as a driver returns it, parsed: the Data API returns json as a string; pg and PGlite parse
 * it. This is the one place that evens that out. The value is the document the statement built; its type is the
 * caller's word for that statement's shape, not checked here.
 */
export const fromJson = <T>(value: unknown): T =>
  (typeof value === 'string' ? JSON.parse(value) : value) as T;

const json =
  <T>(): Column<T> =>
  (v) =>
    fromJson<T>(v);

const nullable =
  <T>(column: Column<T>): Column<T | null> =>
  (v, name) =>
    v === null || v === undefined ? null : column(v, name);

/** A column that is one of `values` (a text column with a closed set, e.g. a status). */
const oneOf =
  <const V extends string>(values: readonly V[]): Column<V> =>
  (v, name) => {
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as V;
    throw wrong(name, values.join(' | '), v);
  };

/** The column kinds of queryRows' row shapes. */
export const col = { text, number, bool, json, nullable, oneOf } as const;

/** The rows of an execute() result: drizzle types it per driver (QueryResult, PGlite's Results, the Data API's). */
export const rowsOf = (result: unknown): Record<string, unknown>[] => {
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? rows : [];
};

/** Rows of a raw statement, each column read by `shape` (a column the statement does not return is an error). */
export async function queryRows<S extends RowShape>(db: Db, query: SQL, shape: S): Promise<RowOf<S>[]>;
/** Rows of a raw statement whose values the caller only compares or prints. */
export async function queryRows(db: Db, query: SQL): Promise<Record<string, unknown>[]>;
export async function queryRows(db: Db, query: SQL, shape?: RowShape): Promise<Record<string, unknown>[]> {
  const rows = rowsOf(await db.execute(query));
  if (!shape) return rows;
  const columns = Object.entries(shape);
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const [name, column] of columns) out[name] = column(row[name], name);
    return out;
  });
}

/** Runs `query` (which must select exactly one column named `j` holding json) and returns its parsed value. */
export async function queryJson<T>(db: Db, query: SQL): Promise<T> {
  const [row] = await queryRows(db, query);
  return fromJson<T>(row?.j);
}
