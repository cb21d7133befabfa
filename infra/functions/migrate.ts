// Deploy-time migrations: a CDK Trigger invokes this function once the Aurora cluster and its writer exist (and
// again whenever its bundle changes, i.e. when a migration is added), so a deployment leaves the schema current or
// fails. The SQL files of migrations/ are copied next to the bundle (see the stack's afterBundling hook).
// It runs as the owner (the cluster's master secret) and lets the service role log in with its own secret's password.
// With local auth it also creates the first admin (bootstrap.admin_email), once, with the generated password of the
// stack's InitialAdminPassword secret: without it nobody could sign in to a fresh deployment.
import { join } from 'node:path';
import type { Config } from '#shared/core/config/schema.ts';
import { readSecret } from '#shared/core/config/secrets.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database } from '#shared/core/db/database.ts';
import { isDatabaseUnavailable } from '#shared/core/db/errors.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { allowServiceLogin, serviceRoleName } from '#shared/core/db/service-role.ts';
import { rootLogger } from '#shared/core/logger.ts';
import { ensureBootstrapAdmin } from '#shared/identity/users.ts';

export const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/** How long to keep trying while the database is unavailable (resuming from auto-pause, still starting). */
const UNAVAILABLE_BUDGET_MS = 4 * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface MigrationResult {
  applied: string[];
  /** The service role whose login it set (from SVC_DB_SERVICE_SECRET_ARN). */
  serviceRole?: string;
  admin?: { email: string; created: boolean };
}

// Deploy tooling, not the service: it reads the few variables the stack gives it instead of loading the whole
// config (which would need the JWT secret too, and the IAM to read it).
const setting = (name: string): string | undefined => process.env[name] || undefined;

/** The first admin's password: given directly (sam local, tests) or read from Secrets Manager by its ARN. */
async function initialAdminPassword(): Promise<string | undefined> {
  const direct = setting('SVC_ADMIN_PASSWORD');
  if (direct) return direct;
  const arn = setting('SVC_ADMIN_PASSWORD_ARN');
  return arn ? readSecret(arn) : undefined;
}

/**
 * Lets the service role log in with the password of its secret (SVC_DB_SERVICE_SECRET_ARN, the JSON of an RDS
 * database secret), on every deploy: a password put into the secret takes effect with the next one.
 */
export async function allowServiceRole(
  database: Database,
  arn: string | undefined,
  read: (arn: string) => Promise<string> = readSecret,
): Promise<string | undefined> {
  if (!arn) return undefined;
  const { username, password } = JSON.parse(await read(arn)) as {
    username?: string;
    password?: string;
  };
  const role = await serviceRoleName(database.db);
  if (username !== role || !password) {
    throw new Error(`the service database secret must hold the user ${role} and a password`);
  }
  await allowServiceLogin(database.db, role, password);
  return role;
}

async function migrateAndBootstrap(database: Database): Promise<MigrationResult> {
  const { applied } = await migrate(database.db, MIGRATIONS_DIR);
  const serviceRole = await allowServiceRole(database, setting('SVC_DB_SERVICE_SECRET_ARN'));
  const password = await initialAdminPassword();
  if (!password) return { applied, ...(serviceRole ? { serviceRole } : {}) };
  // Never overwrites: an existing user with that email (or a later password change) is left alone.
  const admin = await ensureBootstrapAdmin(database.db, {
    email: setting('SVC_ADMIN_EMAIL') ?? '',
    password,
    allowGenerated: false,
  });
  return {
    applied,
    ...(serviceRole ? { serviceRole } : {}),
    admin: { email: admin.email, created: admin.created },
  };
}

export const handler = async (): Promise<MigrationResult> => {
  const db: Omit<Config['db'], 'service_role'> = {
    dsn: setting('SVC_DB_DSN') ?? '',
    max_open_conns: 1,
    max_idle_conns: 0,
    max_idle_time: 1_000,
    statement_timeout: 60_000,
    resume_wait: 20_000,
  };
  const started = Date.now();
  for (let attempt = 1, delay = 2_000; ; attempt++, delay = Math.min(delay * 2, 30_000)) {
    const database = await connectDatabase({ db });
    try {
      const result = await migrateAndBootstrap(database);
      rootLogger.info('migrations applied', { ...result, database: database.description, attempt });
      return result;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() - started + delay > UNAVAILABLE_BUDGET_MS) {
        const e = err as { name?: string; cause?: { name?: string; code?: string; message?: string } };
        // drizzle's error message carries the SQL and its parameters: log the name and SQLSTATE, and fail the
        // deployment with the database's own message (CloudFormation shows it), never the query.
        rootLogger.error('migrations failed', {
          errorName: e.name,
          causeName: e.cause?.name,
          causeCode: e.cause?.code,
          attempt,
        });
        if (e.cause)
          throw new Error(`migration failed: ${e.cause.name ?? e.name} ${e.cause.code ?? ''}`.trim());
        throw err;
      }
      rootLogger.warn('database unavailable, retrying migrations', { attempt, delayMs: delay });
      await sleep(delay);
    } finally {
      await database.close();
    }
  }
};
