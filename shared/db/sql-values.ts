import { type SQL, sql } from 'drizzle-orm';

// Explicitly typed parameters for raw statements. The RDS Data API sends unhinted strings as varchar, so every
// non-text parameter of a raw statement is cast here, once, the same way on all three drivers.
export const uuidParam = (value: string): SQL => sql`${value}::uuid`;
export const tsParam = (value: Date): SQL => sql`${value.toISOString()}::timestamptz`;
export const jsonParam = (value: unknown): SQL => sql`${JSON.stringify(value)}::jsonb`;
export const textParam = (value: string | null | undefined): SQL => sql`${value ?? null}::text`;
