// The database's service role (migrations/0034_service_role.sql): what the migrating owner does to let it log in,
// for npm start (local-server/service-role.ts) and the deploy-time Migrate function alike. The password goes to the
// server as a SCRAM verifier, so the password itself is never in a statement the server could log.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from './database.ts';
import { col, queryRows } from './query.ts';

/** PostgreSQL's stored form of a SCRAM-SHA-256 password (RFC 5802, 7677), as ALTER ROLE … PASSWORD accepts it. */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** The service role of the database `db` is connected to: `<database>_service`. */
export async function serviceRoleName(db: Db): Promise<string> {
  const [row] = await queryRows(db, sql`SELECT left(current_database(), 55) || '_service' AS role`, {
    role: col.text,
  });
  if (!row) throw new Error('no current database');
  return row.role;
}

/** Lets the service role log in with `password` (run as the owner, who made it). */
export async function allowServiceLogin(db: Db, role: string, password: string): Promise<void> {
  await db.execute(
    sql.raw(`ALTER ROLE "${role.replace(/"/g, '""')}" LOGIN PASSWORD '${scramVerifier(password)}'`),
  );
}
