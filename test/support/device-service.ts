// Service instances the device tests need besides startTestService: one restarted on the same database with
// another config, and a second, separate process on the same database (another "Lambda instance": its own pool,
// its own caches), as the protocol's replay refusal must hold across instances.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '#shared/http/logger.ts';
import { type LocalService, startLocalService } from '#shared/local/service.ts';
import { type DriverKind, provisionDatabase } from './databases.ts';
import { TEST_ADMIN, TEST_JWT_SECRET, testConfig } from './service.ts';

/** A database that outlives one service: PGlite in a temporary directory, or a fresh PostgreSQL database. */
export async function persistentDatabase(
  driver: DriverKind,
): Promise<{ dsn: string; cleanup(): Promise<void> }> {
  if (driver !== 'pglite') return provisionDatabase(driver);
  const dir = mkdtempSync(join(tmpdir(), 'acp-device-'));
  return { dsn: `pglite:${dir}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The service as npm start runs it, on `dsn`, with or without a dashboard URL (set either way here: the config
 * file the test config starts from may name one).
 */
export function startOnDatabase(dsn: string, dashboardUrl: string | undefined): Promise<LocalService> {
  return startLocalService({
    config: testConfig({ dashboard_url: dashboardUrl, db: { dsn } }),
    log: createLogger({ test: true }),
  });
}

/** A token of the test admin from POST /v1/auth/login. */
export async function loginToken(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(TEST_ADMIN),
  });
  const body = (await res.json()) as { data?: { access_token: string } };
  if (!body.data) throw new Error(`login failed: ${res.status}`);
  return body.data.access_token;
}

const MAIN = fileURLToPath(new URL('../../shared/local/main.ts', import.meta.url));

/**
 * `npm start` in a child process on `dsn`: a second service instance with its own connections and caches.
 * Resolves once it listens; stop() ends exactly that child.
 */
export async function spawnServiceProcess(
  dsn: string,
  env: Record<string, string> = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      TZ: 'UTC',
      SVC_DB_DSN: dsn,
      SVC_JWT_SECRET: TEST_JWT_SECRET,
      SVC_ADMIN_EMAIL: TEST_ADMIN.email,
      SVC_ADMIN_PASSWORD: TEST_ADMIN.password,
      PORT: '0',
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'AKIDTESTDATAAPI',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'test-data-api-secret-key',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (!url) {
    url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    if (url) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the second service did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
