// The databases the integration suite runs on: PGlite always; a real PostgreSQL and the RDS Data API path (the real
// RDSDataClient against test/support/data-api-server.ts, executing on that PostgreSQL) when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type DriverKind = 'pglite' | 'postgres' | 'data-api';

export function testDatabaseUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

/** TEST_DRIVERS=postgres,data-api narrows the list while working on one driver. */
export function driversUnderTest(): DriverKind[] {
  const all: DriverKind[] = testDatabaseUrl() ? ['pglite', 'postgres'] : ['pglite'];
  const only = process.env.TEST_DRIVERS?.split(',').map((s) => s.trim());
  return only ? all.filter((kind) => only.includes(kind)) : all;
}

export interface ProvisionedDatabase {
  kind: DriverKind;
  dsn: string;
  /** For postgres and data-api: the plain connection string of the fresh database. */
  url?: string;
  cleanup(): Promise<void>;
}

/** A fresh, empty PostgreSQL database on the TEST_DATABASE_URL server, dropped by cleanup(). */
export async function createPostgresDatabase(): Promise<{
  url: string;
  name: string;
  drop(): Promise<void>;
}> {
  const base = testDatabaseUrl();
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const name = `acp_t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function provisionDatabase(kind: DriverKind): Promise<ProvisionedDatabase> {
  if (kind === 'pglite') return { kind, dsn: 'pglite:memory', cleanup: async () => {} };
  const database = await createPostgresDatabase();
  if (kind === 'postgres') return { kind, dsn: database.url, url: database.url, cleanup: database.drop };
  throw new Error('the data-api test endpoint arrives in the next commit');
}
