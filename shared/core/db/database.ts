import type { RDSDataClient } from '@aws-sdk/client-rds-data';
import type { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { Pool } from 'pg';

/** Any of the three drizzle drivers, or a transaction on one of them: domain code takes this. */
export type Db = PgDatabase<PgQueryResultHKT>;

export type DriverName = 'pglite' | 'postgres' | 'data-api';

interface DatabaseBase {
  readonly db: Db;
  /** A short description without credentials, for logs and the health check. */
  readonly description: string;
  close(): Promise<void>;
}

/** An open database: the ORM handle, and the driver's own client beside it (for what the ORM does not do). */
export type Database = DatabaseBase &
  (
    | { readonly driver: 'pglite'; readonly client: PGlite }
    | { readonly driver: 'postgres'; readonly client: Pool }
    | { readonly driver: 'data-api'; readonly client: RDSDataClient }
  );
