import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { type LocalService, type StartOptions, startLocalService } from '#local-server/service.ts';
import { loadConfig } from '#shared/core/config/load.ts';
import type { Config } from '#shared/core/config/schema.ts';
import { createLogger } from '#shared/core/logger.ts';
import type { ScheduleId } from '#shared/routes.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { ContractRecorder } from './contract.ts';
import { type DriverKind, type ProvisionedDatabase, provisionDatabase } from './databases.ts';

export const TEST_ADMIN = { email: 'admin@example.test', password: 'correct horse battery staple' };
/** This run's JWT secret (made per run: no secret that signs anything is committed). */
export const TEST_JWT_SECRET = randomSecret();
const TEST_CONFIG_FILE = fileURLToPath(new URL('./test-config.toml', import.meta.url));

export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Config {
  return loadConfig({
    argv: ['--config', TEST_CONFIG_FILE],
    env: {},
    overrides: {
      port: 0,
      auth: { jwt_secret: TEST_JWT_SECRET },
      bootstrap: { admin_email: TEST_ADMIN.email, admin_password: TEST_ADMIN.password },
      cors: { allowed_origins: ['http://dashboard.test'] },
      ...overrides,
    },
    ...(Object.keys(env).length ? { env } : {}),
  });
}

export interface TestService extends LocalService {
  driver: DriverKind;
  /** The database it runs on (for postgres and data-api: its own database on the server). */
  database: ProvisionedDatabase;
  /** The check of every response against the OpenAPI document (for requests sent without `call`). */
  contract: ContractRecorder;
  /** fetch against the service; JSON bodies are encoded, Authorization added when `token` is given. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; text: string }>;
  adminToken(): Promise<string>;
  dispose(): Promise<void>;
}

/**
 * startLocalService, with every response checked against the OpenAPI document (test/support/contract.ts): stop()
 * throws for any response that broke it and that no request helper took.
 */
export async function startCheckedService(
  options: StartOptions,
): Promise<{ service: LocalService; contract: ContractRecorder }> {
  const contract = new ContractRecorder();
  const service = await startLocalService({ ...options, onResponse: contract.onResponse });
  return {
    service: {
      ...service,
      stop: async () => {
        await service.stop();
        contract.assertNone();
      },
    },
    contract,
  };
}

/** Starts the service exactly as npm start does (migrations, bootstrap admin, API Gateway emulator) on `driver`. */
export async function startTestService(
  driver: DriverKind,
  overrides: Record<string, unknown> = {},
  options: { databaseServer?: string } = {},
): Promise<TestService> {
  const database = await provisionDatabase(driver, options.databaseServer);
  const config = testConfig({ ...overrides, db: { dsn: database.dsn, ...((overrides.db as object) ?? {}) } });
  const { service, contract } = await startCheckedService({ config, log: createLogger({ test: true }) });
  let token: string | undefined;
  const call: TestService['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${service.url}${path}`, { method, headers, body });
    const text = await res.text();
    contract.take(res.headers.get('apigw-requestid'));
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = {};
    }
    return { status: res.status, body: parsed, headers: res.headers, text };
  };
  return {
    ...service,
    driver,
    database,
    contract,
    call,
    adminToken: async () => {
      if (!token) {
        const res = await call('POST', '/v1/auth/login', { body: TEST_ADMIN });
        token = (res.body.data as { access_token: string }).access_token;
      }
      return token;
    },
    dispose: async () => {
      await service.stop();
      await database.cleanup();
    },
  };
}

/** Makes a user with the `user` role through the admin API and signs them in: their access token. */
export async function userToken(svc: TestService, email: string, name: string): Promise<string> {
  const password = 'a long enough password';
  const created = await svc.call('POST', '/v1/admin/users', {
    token: await svc.adminToken(),
    body: { email, name, password, roles: ['user'] },
  });
  assert.equal(created.status, 201, created.text);
  const login = await svc.call('POST', '/v1/auth/login', { body: { email, password } });
  assert.equal(login.status, 200, login.text);
  return (login.body.data as { access_token: string }).access_token;
}

/**
 * Runs the scheduled function `name` until `done` holds, or fails with `what` after a minute. Used for passes that
 * may take several runs: an export pass reads only events of transactions older than every one still running in
 * the whole cluster, so on a shared server an event may wait for another database's transaction.
 */
export async function runScheduleUntil(
  svc: TestService,
  name: ScheduleId,
  done: () => Promise<boolean>,
  what: string,
): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    await svc.runSchedule(name);
    if (await done()) return;
    await sleep(200);
  }
  assert.fail(what);
}
