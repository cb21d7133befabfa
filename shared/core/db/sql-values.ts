import { type AnyColumn, eq, type SQL, sql } from 'drizzle-orm';

// Explicitly typed parameters for raw statements. The RDS Data API sends unhinted strings as varchar, so every
// non-text parameter of a raw statement is cast here, once, the same way on all three drivers.
export const uuidParam = (value: string): SQL => sql`${value}::uuid`;
export const tsParam = (value: Date): SQL => sql`${value.toISOString()}::timestamptz`;
export const jsonParam = (value: unknown): SQL => sql`${JSON.stringify(value)}::jsonb`;
export const textParam = (value: string | null | undefined): SQL => sql`${value ?? null}::text`;
export const intParam = (value: number): SQL => sql`${value}::int`;

/**
 * `column = value` for a text filter that is not validated first (the lenient admin lists): PostgreSQL text cannot
 * hold U+0000, so a value with one equals no stored value, and is never sent (the server would refuse it).
 */
export const textEquals = (column: AnyColumn, value: string): SQL =>
  value.includes('\u0000') ? sql`false` : (eq(column, value) as SQL);
