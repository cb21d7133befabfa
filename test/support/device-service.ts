// Service instances the device tests need besides startTestService: one restarted on the same database with
// another config, and a second, separate process on the same database (another "Lambda instance": its own pool,
// its own caches), as the protocol's replay refusal must hold across instances.
import type { LocalService } from '#local-server/service.ts';
import { createLogger } from '#shared/core/logger.ts';
import { startMain } from './child.ts';
import { startCheckedService, TEST_ADMIN, TEST_JWT_SECRET, testConfig } from './service.ts';

/**
 * The service as npm start runs it, on `dsn`, with or without a dashboard URL (set either way here: the config
 * file the test config starts from may name one).
 */
export async function startOnDatabase(dsn: string, dashboardUrl: string | undefined): Promise<LocalService> {
  const { service } = await startCheckedService({
    config: testConfig({ dashboard_url: dashboardUrl, db: { dsn } }),
    log: createLogger({ test: true }),
  });
  return service;
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

/**
 * `npm start` in a child process on `dsn`: a second service instance with its own connections and caches.
 * Resolves once it listens; stop() ends exactly that child.
 */
export async function spawnServiceProcess(
  dsn: string,
  env: Record<string, string> = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const { child, output, waitFor } = startMain([], {
    SVC_DB_DSN: dsn,
    SVC_JWT_SECRET: TEST_JWT_SECRET,
    SVC_ADMIN_EMAIL: TEST_ADMIN.email,
    SVC_ADMIN_PASSWORD: TEST_ADMIN.password,
    PORT: '0',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'AKIDTESTDATAAPI',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'test-data-api-secret-key',
    ...env,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const [, url] = await waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/).catch(() => {
    child.kill('SIGKILL');
    throw new Error(`the second service did not start:\n${output()}`);
  });
  return {
    url: url as string,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
