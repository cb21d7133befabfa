// npm start on PostgreSQL: the DSN's user (the owner) applies the migrations, then the service reconnects as the
// database's service role, `<database>_service` (migrations/0031_service_role.sql): DML on the tables and the owner's
// few SECURITY DEFINER functions, no DDL on the tables, no role management. Its password is generated once into the
// data directory (file db-service-password, owner-only, like the JWT secret) and given to the role by the owner on
// every start, as a SCRAM verifier, so the password itself is never in a statement the server could log.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '#shared/db/database.ts';
import { queryRows } from '#shared/db/query.ts';
import { localSecret } from './jwt-secret.ts';

export const SERVICE_PASSWORD_FILE = 'db-service-password';

/** PostgreSQL's stored form of a SCRAM-SHA-256 password (RFC 5802, 7677), as ALTER ROLE … PASSWORD accepts it. */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Lets the service role log in with the data directory's password (as the owner, `db`) and returns the DSN that
 * connects as it. Fails naming db.service_role when the DSN's user may not do so (not the owner of the database's
 * roles).
 */
export async function serviceRoleDsn(db: Db, ownerDsn: string, dataDir: string): Promise<string> {
  const [row] = await queryRows<{ role: string }>(
    db,
    sql`SELECT left(current_database(), 55) || '_service' AS role`,
  );
  if (!row) throw new Error('no current database');
  const password = localSecret(dataDir, SERVICE_PASSWORD_FILE, 'db.service_role').value;
  const verifier = scramVerifier(password);
  try {
    await db.execute(sql.raw(`ALTER ROLE "${row.role.replace(/"/g, '""')}" LOGIN PASSWORD '${verifier}'`));
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new Error(
      `db.service_role: the DSN's user cannot let ${row.role} log in (${cause}); connect as the database's owner, or set db.service_role = false`,
    );
  }
  const url = new URL(ownerDsn);
  url.username = encodeURIComponent(row.role);
  url.password = encodeURIComponent(password);
  return url.toString();
}
