import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.ts';
import type { Database, Db } from './database.ts';
import { describeDsn, parseDsn } from './dsn.ts';

/**
 * Opens the database the DSN names. Driver modules are imported lazily so that a Lambda bundle only pays for
 * loading the driver it uses at run time.
 */
export async function connectDatabase(config: { db: Omit<Config['db'], 'service_role'> }): Promise<Database> {
  const parsed = parseDsn(config.db.dsn);
  const description = describeDsn(parsed);
  switch (parsed.kind) {
    case 'pglite': {
      const { PGlite } = await import('@electric-sql/pglite');
      const { drizzle } = await import('drizzle-orm/pglite');
      if (parsed.dataDir) mkdirSync(parsed.dataDir, { recursive: true });
      const client = await PGlite.create(parsed.dataDir ?? 'memory://', {});
      await client.exec(`SET TIME ZONE 'UTC'`);
      const db: Db = drizzle(client);
      return { db, driver: 'pglite', client, description, close: () => client.close() };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const { drizzle } = await import('drizzle-orm/node-postgres');
      const pool = new pg.Pool({
        connectionString: parsed.url,
        max: config.db.max_open_conns,
        // node-postgres keeps an idle connection until it has been idle for idleTimeoutMillis; it has no cap on
        // idle connections below `max`. So max_idle_conns = 0 means "close idle connections at once", any other
        // value keeps them for db.max_idle_time (docs/configuration.md says so).
        idleTimeoutMillis: config.db.max_idle_conns === 0 ? 1 : config.db.max_idle_time,
        connectionTimeoutMillis: 5_000,
        statement_timeout: config.db.statement_timeout,
        options: '-c TimeZone=UTC',
      });
      // A connection lost (database restart, failover, backend terminated) must not crash the process. The pool
      // listens on idle clients and replaces them; a client lost while checked out also emits 'error', which the
      // pool does not listen to then: its query fails (503) and the pool discards it on release.
      pool.on('error', () => {});
      pool.on('connect', (client) => client.on('error', () => {}));
      const db: Db = drizzle(pool);
      return { db, driver: 'postgres', client: pool, description, close: () => pool.end() };
    }
    case 'data-api': {
      const { createDataApiClient } = await import('./data-api-client.ts');
      const { drizzle } = await import('drizzle-orm/aws-data-api/pg');
      const client = createDataApiClient({
        region: parsed.region,
        endpoint: parsed.endpoint,
        resumeBudgetMs: config.db.resume_wait,
      });
      const db: Db = drizzle(client, {
        database: parsed.database,
        resourceArn: parsed.resourceArn,
        secretArn: parsed.secretArn,
      });
      return {
        db,
        driver: 'data-api',
        client,
        description,
        close: async () => client.destroy(),
      };
    }
  }
}
