import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** Any of the three drizzle drivers, or a transaction on one of them: domain code takes this. */
export type Db = PgDatabase<PgQueryResultHKT>;

export type DriverName = 'pglite' | 'postgres' | 'data-api';

export interface Database {
  readonly db: Db;
  readonly driver: DriverName;
  /** A short description without credentials, for logs and the health check. */
  readonly description: string;
  close(): Promise<void>;
}
