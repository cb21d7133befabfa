// npm start on PostgreSQL: the DSN's user (the owner) applies the migrations, then the service reconnects as the
// database's service role, `<database>_service` (migrations/0034_service_role.sql): DML on the tables and the owner's
// few SECURITY DEFINER functions, no DDL on the tables, no role management. Its password is generated once into the
// data directory (file db-service-password, owner-only, like the JWT secret) and given to the role by the owner on
// every start.
import type { Db } from '#shared/core/db/database.ts';
import { allowServiceLogin, serviceRoleName } from '#shared/core/db/service-role.ts';
import { localSecret } from './jwt-secret.ts';

export const SERVICE_PASSWORD_FILE = 'db-service-password';

/**
 * Lets the service role log in with the data directory's password (as the owner, `db`) and returns the DSN that
 * connects as it. Fails naming db.service_role when the DSN's user may not do so.
 */
export async function serviceRoleDsn(db: Db, ownerDsn: string, dataDir: string): Promise<string> {
  const role = await serviceRoleName(db);
  const password = localSecret(dataDir, SERVICE_PASSWORD_FILE, 'db.service_role').value;
  try {
    await allowServiceLogin(db, role, password);
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new Error(
      `db.service_role: the DSN's user cannot let ${role} log in (${cause}); connect as the database's owner, or set db.service_role = false`,
    );
  }
  const url = new URL(ownerDsn);
  url.username = encodeURIComponent(role);
  url.password = encodeURIComponent(password);
  return url.toString();
}
