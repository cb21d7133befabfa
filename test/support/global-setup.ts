// The test run's global setup (`node --test --test-global-setup`), run once in the runner's own process; test files
// run in child processes, which inherit the variables set here.
// - Without TEST_DATABASE_URL, a real PostgreSQL from npm is started for the whole run and stopped at its end, so the
//   PostgreSQL and Data API suites run on every machine (one server for all suites; each suite creates its own
//   database on it). TEST_DATABASE_URL selects an existing server instead; TEST_DRIVERS=pglite needs none.
// - Every response the tests check against the OpenAPI document is counted (test/support/contract.ts) in files of
//   CONTRACT_COVERAGE_DIR; the summary reporter of the process that made the directory prints the figures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverDriversSelected } from './databases.ts';
import { type EmbeddedServer, startEmbeddedPostgres } from './embedded-postgres.ts';

let server: EmbeddedServer | undefined;

export async function globalSetup(): Promise<void> {
  // Several runs at once (test:fast) share the directory that scripts/test.ts made, and it reports their figures.
  if (!process.env.CONTRACT_COVERAGE_DIR) {
    process.env.CONTRACT_COVERAGE_DIR = mkdtempSync(join(tmpdir(), 'acp-contract-'));
    process.env.CONTRACT_COVERAGE_READER = String(process.pid);
  }
  if (process.env.TEST_DATABASE_URL || !serverDriversSelected()) return;
  const started = Date.now();
  server = await startEmbeddedPostgres();
  process.env.TEST_DATABASE_URL = server.url;
  process.stdout.write(
    `embedded PostgreSQL on 127.0.0.1:${server.port} (started in ${Date.now() - started} ms)\n`,
  );
}

export async function globalTeardown(): Promise<void> {
  await server?.destroy();
  // The coverage directory is removed by the summary reporter, which reads it after the last test (and may do so
  // after this teardown).
}
