import type { SQL } from 'drizzle-orm';
import type { Db } from './database.ts';

/**
 * Rows of a raw statement. The three drivers agree on the shape ({rows}) but not on value types (pg gives Date and
 * objects, the Data API strings), so raw statements used by domain code should select text, integers and booleans,
 * or aggregate to JSON through queryJson.
 */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows?: T[] };
  return result.rows ?? [];
}

/**
 * A json or jsonb value as a driver returns it, parsed: the Data API returns json as a string; pg and PGlite parse
 * it. This is the one place that evens that out.
 */
export const fromJson = <T>(value: unknown): T =>
  (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** Runs `query` (which must select exactly one column named `j` holding json) and returns its parsed value. */
export async function queryJson<T>(db: Db, query: SQL): Promise<T> {
  const [row] = await queryRows<{ j: unknown }>(db, query);
  return fromJson<T>(row?.j);
}
