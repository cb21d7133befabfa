// Which client code a database's driver gets, behind the ORM: the role session of each driver (roleSessionFor), and
// our own parameterized statements (rawExecutor).
import type { Database } from '../../../core/db/database.ts';
import type { RoleSession } from './session.ts';
import { dataApiSession } from './session-data-api.ts';
import { pgliteSession } from './session-pglite.ts';
import { postgresSession } from './session-postgres.ts';

/**
 * One parameterized statement of ours ($1, $2… placeholders) on the driver's own client, without the ORM's per-call
 * work (a third of the query path's usage write on PGlite). node-postgres prepares it under `name` once per
 * connection (a third of the write's time on PostgreSQL was planning it). node-postgres and PGlite only; undefined on
 * the Data API, whose parameters need the ORM's typing.
 */
export function rawExecutor(
  database: Database,
): ((name: string, text: string, params: unknown[]) => Promise<void>) | undefined {
  if (database.driver === 'postgres') {
    const pool = database.client;
    return async (name, text, values) => {
      await pool.query({ name, text, values });
    };
  }
  if (database.driver !== 'pglite') return undefined;
  const pglite = database.client;
  return async (_name, text, params) => {
    await pglite.query(text, params);
  };
}

export function roleSessionFor(database: Database): RoleSession {
  if (database.driver === 'postgres') return postgresSession(database.client);
  if (database.driver === 'pglite') return pgliteSession(database.client);
  return dataApiSession(database);
}
