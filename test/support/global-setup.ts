// The test run's global setup (`node --test --test-global-setup`): without TEST_DATABASE_URL, a real PostgreSQL from
// npm is started for the whole run and stopped at its end, so the PostgreSQL and Data API suites run on every machine
// (one server for all suites; each suite creates its own database on it). TEST_DATABASE_URL selects an existing
// server instead. Test files run in child processes, which inherit the variable set here.
import { type EmbeddedServer, startEmbeddedPostgres } from './embedded-postgres.ts';

let server: EmbeddedServer | undefined;

export async function globalSetup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  const started = Date.now();
  server = await startEmbeddedPostgres();
  process.env.TEST_DATABASE_URL = server.url;
  process.stdout.write(
    `embedded PostgreSQL on 127.0.0.1:${server.port} (started in ${Date.now() - started} ms)\n`,
  );
}

export async function globalTeardown(): Promise<void> {
  await server?.destroy();
}
