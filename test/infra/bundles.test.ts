// The bundles work as bundled: synthesize with esbuild (as `cdk synth` does), copy every function's asset directory
// into the project (so the externals Lambda never loads — PGlite, pg — still resolve from node_modules for these
// local runs), and call each handler in a fresh Node process with the environment the stack gives it, on a real
// database: PGlite always; through the bundled AWS SDK against a Data API endpoint too (a stub answering the health
// check here, and the whole sequence on test/support/data-api-server.ts when TEST_DATABASE_URL names a PostgreSQL).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CfnElement } from 'aws-cdk-lib';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { sql } from 'drizzle-orm';
import { parquetReadObjects } from 'hyparquet';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { loadConfig } from '#shared/core/config/load.ts';
import type { Config } from '#shared/core/config/schema.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { migrate, readMigrations } from '#shared/core/db/migrate.ts';
import type { RouteSpec } from '#shared/core/http/route.ts';
import { S3ObjectStore } from '#shared/core/object-store/s3-store.ts';
import { createUser } from '#shared/identity/users.ts';
import { buildOpenApi } from '#shared/meta/openapi.ts';
import { readArchivedHour } from '#shared/observability/archive/archive.ts';
import { fallback, routes } from '#shared/routes.ts';
import { runNode } from '#test/support/child.ts';
import { assertContract } from '#test/support/contract.ts';
import { createPostgresDatabase, testDatabaseUrl } from '#test/support/databases.ts';
import { startS3Server } from '#test/support/s3-server.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { ENTRY_FILE, RUNTIME_ASSETS } from '../../infra/bundling.ts';
import { ENV } from '../../infra/constructs/service-function.ts';
import type { PlannedFunction } from '../../infra/plan.ts';
import { LAMBDA_CONFIG_PATH } from '../../infra/settings.ts';
import { httpEvent, LAMBDA_ENVIRONMENT, localStoresConfig, RUNNER } from './bundle-invoke.ts';
import { PROJECT_ROOT, type Synthesized, synth } from './synth.ts';

const JWT_SECRET = randomSecret();
const ADMIN = { email: 'admin@bundle.test', password: 'a long bundle-test password' };
const FAKE_ARN = {
  cluster: 'arn:aws:rds:us-east-1:123456789012:cluster:bundle-test',
  dbSecret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bundle-test-db-AbCdEf',
  jwt: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bundle-test-jwt-AbCdEf',
  envsvc: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bundle-test-envsvc-AbCdEf',
  admin: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bundle-test-admin-AbCdEf',
  auditIngest: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bundle-test-audit-ingest-AbCdEf',
};
const FAKE_ARN_OF: Record<string, string> = {
  SVC_JWT_SECRET_ARN: FAKE_ARN.jwt,
  SVC_ENVSVC_TOKEN_ARN: FAKE_ARN.envsvc,
  SVC_ADMIN_PASSWORD_ARN: FAKE_ARN.admin,
  SVC_AUDIT_INGEST_TOKEN_ARN: FAKE_ARN.auditIngest,
  // Left out: the service role's login is the owner's step after migrating (test/integration/requests/roles.test.ts).
  SVC_DB_SERVICE_SECRET_ARN: '',
  // Not an ARN: the console's URL (CloudFront's domain), the dashboard when config/prod.toml names none.
  SVC_DASHBOARD_URL: 'https://d111111abcdef8.cloudfront.net/console',
};
const AUDIT_INGEST_TOKEN = randomSecret();

interface Bundle {
  planned: PlannedFunction;
  dir: string;
  /** The function's environment in the template, with CloudFormation references replaced by test values. */
  environment: Record<string, string>;
}

interface Invocation {
  result?: { statusCode?: number; body?: string; headers?: Record<string, string> } & Record<string, unknown>;
  error?: { name?: string; message?: string };
  stdout: string;
  stderr: string;
}

/** A Secrets Manager endpoint (awsJson1.1 GetSecretValue) serving `secrets`, recording what it was asked. */
async function fakeSecretsManager(secrets: Record<string, string>) {
  const calls: Array<{ target: string; secretId: string }> = [];
  const authorizations: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const { SecretId = '' } = JSON.parse(raw || '{}') as { SecretId?: string };
      calls.push({ target: String(req.headers['x-amz-target']), secretId: SecretId });
      authorizations.push(String(req.headers.authorization));
      const value = secrets[SecretId];
      if (value === undefined) {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(
          JSON.stringify({ __type: 'ResourceNotFoundException', message: 'Secrets Manager can not find it' }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ ARN: SecretId, Name: 'bundle-test', SecretString: value, VersionId: 'v1' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let synthesized: Synthesized;
let work: string;
const bundles = new Map<string, Bundle>();
let migrateBundle: Bundle;

function assetDirOf(element: CfnElement): string {
  const logicalId = synthesized.stack.getLogicalId(element);
  const resource = (
    synthesized.template.toJSON().Resources as Record<string, { Metadata?: Record<string, string> }>
  )[logicalId]!;
  const assetPath = resource.Metadata?.['aws:asset:path'];
  assert.ok(assetPath, `${logicalId} has no asset path`);
  return join(synthesized.outdir, assetPath);
}

function environmentOf(element: CfnElement): Record<string, string> {
  const logicalId = synthesized.stack.getLogicalId(element);
  const resource = (
    synthesized.template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>
  )[logicalId]!;
  const variables = (resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    environment[name] = typeof value === 'string' ? value : (FAKE_ARN_OF[name] ?? `unresolved:${name}`);
  }
  return environment;
}

function copyBundle(name: string, from: string): string {
  const dir = join(work, name);
  cpSync(from, dir, { recursive: true });
  return dir;
}

/**
 * Calls the handler of `bundle` in a fresh Node process. With `fromSource`, the same handler's TypeScript source runs
 * instead (same environment and config): what the bundle is compared with when it does not answer as expected.
 */
async function invoke(
  bundle: Bundle,
  event: unknown,
  dsn: string,
  options: { fromSource?: boolean; secretsFromArns?: boolean; env?: Record<string, string> } = {},
) {
  const id = randomUUID();
  const eventFile = join(work, `${id}.event.json`);
  const resultFile = join(work, `${id}.result.json`);
  writeFileSync(eventFile, JSON.stringify(event));
  // What Lambda gives the process, and the function's own variables from the template; nothing inherited.
  const env: Record<string, string> = {
    ...LAMBDA_ENVIRONMENT,
    AWS_LAMBDA_FUNCTION_NAME: bundle.planned.constructId,
    ...bundle.environment,
    [ENV.config]: join(bundle.dir, basename(LAMBDA_CONFIG_PATH)),
    [ENV.dsn]: dsn,
    // The value given directly, as `sam local` does; `secretsFromArns` leaves it out so that the function reads
    // it from Secrets Manager by the ARN of its environment (at the endpoint `env` names).
    ...(options.secretsFromArns
      ? {}
      : {
          SVC_JWT_SECRET: JWT_SECRET,
          SVC_ENVSVC_TOKEN: randomSecret(),
          SVC_AUDIT_INGEST_TOKEN: AUDIT_INGEST_TOKEN,
        }),
    ...options.env,
  };
  const entry = options.fromSource ? bundle.planned.entry : join(bundle.dir, ENTRY_FILE);
  const { code, stdout, stderr } = await runNode([join(work, 'invoke.mjs'), entry, eventFile, resultFile], {
    cwd: options.fromSource ? PROJECT_ROOT : bundle.dir,
    env,
  });
  assert.equal(code, 0, `${bundle.planned.handler} exited with ${code}: ${stderr}`);
  const outcome = JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<Invocation, 'stdout' | 'stderr'>;
  // An HTTP invocation answers as the OpenAPI document says (test/support/contract.ts).
  const http = event as Partial<APIGatewayProxyEventV2>;
  if (http.rawPath && http.requestContext?.http && typeof outcome.result?.statusCode === 'number') {
    assertContract({
      method: http.requestContext.http.method,
      path: http.rawPath,
      status: outcome.result.statusCode,
      body: outcome.result.body ?? '',
    });
  }
  return { ...outcome, stdout, stderr } as Invocation;
}

function jsonBody(invocation: Invocation, what: string): { status: number; body: Record<string, unknown> } {
  assert.equal(
    invocation.error,
    undefined,
    `${what} threw: ${JSON.stringify(invocation.error)}\n${invocation.stderr}`,
  );
  const result = invocation.result!;
  assert.equal(typeof result.statusCode, 'number', `${what}: ${JSON.stringify(result)}`);
  // A page or a script (the API reference) is text; its status is what counts here.
  const json = /json/.test(String(result.headers?.['content-type'] ?? 'application/json'));
  const body = result.body && json ? (JSON.parse(result.body) as Record<string, unknown>) : {};
  return { status: result.statusCode!, body };
}

const prodConfig = () => synthesized.deployment.config;
const bundleOf = (handler: string) => {
  const bundle = bundles.get(handler);
  assert.ok(bundle, `no bundle for ${handler}`);
  return bundle;
};
/** One route per function: rows sharing a handler share its bundle, so one call per bundle proves it. */
const bundleRoutes = () =>
  synthesized.stack.plan.flatMap((planned) =>
    planned.routes
      .slice(0, 1)
      .map((r) => ({ id: r.id, route: (routes as Record<string, RouteSpec>)[r.id]!, planned })),
  );

/** Runs `task` over `items`, `limit` at a time (each invocation is a Node process of its own). */
async function inParallel<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      // Every invocation finishes (no process outlives the test), then the first failure is reported.
      await task(item).catch((err: unknown) => failures.push(err));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
}
const CONCURRENCY = Math.max(2, Math.min(6, availableParallelism() - 1));

interface Scenario {
  /** The DSN the first, sequential steps use (migrations and the first admin, sign-in). */
  dsn: string;
  /** A DSN for one of the independent invocations (PGlite: a copy of the migrated data directory). */
  forkDsn: () => string;
}

/** The anchor bundle run against a directory (localStoresConfig). */
function anchorsInDirectory(bundle: Bundle): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(work, 'anchors-'));
  const file = localStoresConfig(join(bundle.dir, basename(LAMBDA_CONFIG_PATH)), dir);
  return { dir, env: { [ENV.config]: file, SVC_AUDIT_ANCHOR_KMS_KEY: '' } };
}

/**
 * Every handler against one database: migrations and the first admin through the migrate bundle, then each route (real
 * 200s where the request can succeed without fixtures; otherwise a JSON error that is not a 5xx), then the schedules.
 */
async function runAll(scenario: Scenario) {
  const { dsn } = scenario;
  const adminEnv = { env: { SVC_ADMIN_EMAIL: ADMIN.email, SVC_ADMIN_PASSWORD: ADMIN.password } };
  const migrated = await invoke(migrateBundle, {}, dsn, adminEnv);
  assert.equal(migrated.error, undefined, JSON.stringify(migrated.error) + migrated.stderr);
  const expected = readMigrations(join(PROJECT_ROOT, 'migrations')).map((m) => m.name);
  assert.deepEqual(migrated.result?.applied, expected);
  assert.deepEqual(migrated.result?.admin, { email: ADMIN.email, created: true });
  const again = await invoke(migrateBundle, {}, dsn, adminEnv);
  assert.deepEqual(again.result?.applied, [], 'a second deploy applies nothing');
  assert.deepEqual(
    again.result?.admin,
    { email: ADMIN.email, created: false },
    'and keeps the admin as it is',
  );

  const health = jsonBody(
    await invoke(bundleOf('health/healthcheck'), httpEvent(routes.healthcheck), dsn),
    'health',
  );
  assert.equal(health.status, 200, JSON.stringify(health.body));
  assert.equal(health.body.status, 'ok');

  let token: string | undefined;
  if (bundles.has('identity/login')) {
    const login = jsonBody(
      await invoke(bundleOf('identity/login'), httpEvent(routes.login, { body: ADMIN }), dsn),
      'login',
    );
    assert.equal(login.status, 200, JSON.stringify(login.body));
    token = (login.body.data as { access_token: string }).access_token;
    assert.ok(token);
  }

  const results: string[] = [];
  const sourceFailures: string[] = [];
  const others = bundleRoutes().filter(
    ({ planned }) => planned.handler !== 'health/healthcheck' && planned.handler !== 'identity/login',
  );
  await inParallel(others, CONCURRENCY, async ({ id, route, planned }) => {
    const needsToken = route.auth === 'user' || route.auth === 'admin' || route.auth === 'device+user';
    const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
    const event = httpEvent(route, {
      ...(needsToken && token ? { token } : {}),
      ...(hasBody ? { body: {} } : {}),
    });
    const dbForThisCall = scenario.forkDsn();
    const bundled = await invoke(bundleOf(planned.handler), event, dbForThisCall);
    const { status, body } = jsonBody(bundled, id);
    results.push(`${route.method} ${route.path} ${status}`);
    if (status >= 400) {
      assert.equal(typeof body.error, 'string', `${id}: ${JSON.stringify(body)}`);
      assert.equal(typeof body.message, 'string', `${id}: ${JSON.stringify(body)}`);
    }
    // A GET without path parameters whose query has no required field can only succeed, given a token.
    const canSucceed =
      route.method === 'GET' &&
      !route.path.includes('{') &&
      (route.query?.safeParse({}).success ?? true) &&
      (route.auth === 'public' || route.auth === 'user' || route.auth === 'admin') &&
      (route.auth === 'public' || token !== undefined);
    if (status < 500 && (!canSucceed || status === 200)) return;
    // Not the answer a working handler gives: the bundle is at fault only if its source answers differently.
    const source = jsonBody(
      await invoke(bundleOf(planned.handler), event, scenario.forkDsn(), { fromSource: true }),
      id,
    );
    assert.equal(
      status,
      source.status,
      `${id}: the bundle answered ${status} ${JSON.stringify(body)}, its source ${source.status}\n${bundled.stdout}`,
    );
    sourceFailures.push(`${route.method} ${route.path}: ${status} from the bundle and from its source`);
  });
  const scheduled = synthesized.stack.plan.flatMap((planned) =>
    planned.schedules.map((schedule) => ({ planned, schedule })),
  );
  await inParallel(scheduled, CONCURRENCY, async ({ planned, schedule }) => {
    const bundle = bundleOf(planned.handler);
    const anchors = planned.handler === 'audit/anchor' ? anchorsInDirectory(bundle) : undefined;
    const invocation = await invoke(bundle, { schedule: schedule.id }, scenario.forkDsn(), {
      env: anchors?.env,
    });
    assert.equal(invocation.error, undefined, `${planned.handler}: ${JSON.stringify(invocation.error)}`);
    if (planned.handler === 'health/probe')
      assert.equal((invocation.result as { status?: string }).status, 'ok');
    if (anchors) {
      const run = invocation.result as { target?: string; anchored?: unknown };
      assert.equal(run.target, 'dir');
      if (run.anchored)
        assert.ok(readdirSync(join(anchors.dir, 'audit', 'anchors')).length > 0, 'the anchor written');
    }
  });
  // Handlers that fail the same way unbundled are not a bundling problem; the suites of their areas own them.
  return { results, sourceFailures };
}

before(() => {
  synthesized = synth({ bundle: true });
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  work = mkdtempSync(join(cache, 'acp-bundle-test-'));
  writeFileSync(join(work, 'invoke.mjs'), RUNNER);
  for (const planned of synthesized.stack.plan) {
    const element = synthesized.stack.functions.get(planned.handler)!.node.defaultChild as CfnElement;
    bundles.set(planned.handler, {
      planned,
      dir: copyBundle(planned.constructId, assetDirOf(element)),
      environment: environmentOf(element),
    });
  }
  const migrateElement = synthesized.stack.migrateFunction.node.defaultChild as CfnElement;
  migrateBundle = {
    planned: {
      handler: 'migrate',
      entry: '',
      feature: 'migrate',
      constructId: 'Migrate',
      kind: 'scheduled',
      sizing: { memoryMb: 512, timeoutSeconds: 300 },
      routes: [],
      schedules: [],
      usesEnvironmentService: false,
      serviceTokens: [],
      defaultRoute: false,
    },
    dir: copyBundle('Migrate', assetDirOf(migrateElement)),
    environment: environmentOf(migrateElement),
  };
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

describe('bundles as synthesized', () => {
  test('each function is index.js (minified CommonJS, source map), and the config without secrets', () => {
    for (const { planned, dir } of [...bundles.values(), migrateBundle]) {
      const code = readFileSync(join(dir, ENTRY_FILE), 'utf8');
      const expectedFiles = [
        ...(planned.handler === 'migrate' ? ['migrations'] : [basename(LAMBDA_CONFIG_PATH)]),
        ENTRY_FILE,
        `${ENTRY_FILE}.map`,
      ].sort();
      // Besides what the bundle loads from its directory at run time (checked below).
      const assets = new Set(RUNTIME_ASSETS.map((asset) => asset.name));
      assert.deepEqual(
        readdirSync(dir)
          .filter((file) => !assets.has(file))
          .sort(),
        expectedFiles,
        planned.handler,
      );
      // The local drivers stay outside the bundle (imported lazily, never on the Data API path).
      for (const marker of ['pglite.wasm', 'initdb.wasm', 'Client has already been connected']) {
        assert.ok(!code.includes(marker), `${planned.handler} bundles a local driver (${marker})`);
      }
      // zod imported as a namespace: its locales are tree-shaken away, no message of another language.
      assert.ok(!code.includes('Ungültige Eingabe') && !code.includes('Entrada inválida'), planned.handler);
      if (planned.handler !== 'migrate') {
        const json = readFileSync(join(dir, basename(LAMBDA_CONFIG_PATH)), 'utf8');
        assert.doesNotMatch(json, /jwt_secret|admin_password|"dsn"/);
        // The same config as the TOML copy the stack derives it from, read by the same loader.
        const tomlCopy = join(work, 'lambda-config.toml');
        writeFileSync(tomlCopy, synthesized.deployment.lambdaConfigToml);
        const env = { SVC_JWT_SECRET: JWT_SECRET, SVC_DB_DSN: 'pglite:memory' };
        assert.deepEqual(
          loadConfig({ argv: ['--config', join(dir, basename(LAMBDA_CONFIG_PATH))], env }),
          loadConfig({ argv: ['--config', tomlCopy], env }),
        );
      }
    }
    // Only the query proxy carries the SQL parser, and only the API reference Redoc's script.
    const withAsset = (name: string) =>
      [...bundles.values()]
        .filter(({ dir }) => readdirSync(dir).includes(name))
        .map((b) => b.planned.handler);
    assert.deepEqual(withAsset('libpg-query.wasm'), ['requests/query']);
    assert.deepEqual(withAsset('redoc.standalone.js'), ['meta/api-reference']);
    const migrations = readdirSync(join(migrateBundle.dir, 'migrations'));
    assert.deepEqual(
      migrations,
      readMigrations(join(PROJECT_ROOT, 'migrations')).map((m) => `${m.name}.sql`),
    );
  });

  test('every handler runs as bundled on PGlite: migrations, sign-in, each route, the schedules', async (t) => {
    const dataDir = join(work, 'pglite');
    const dsn = `pglite:${dataDir}`;
    let forks = 0;
    const { results, sourceFailures } = await runAll({
      dsn,
      // PGlite is one process per data directory: independent invocations each get a copy.
      forkDsn: () => {
        const copy = join(work, `pglite-${++forks}`);
        cpSync(dataDir, copy, { recursive: true });
        return `pglite:${copy}`;
      },
    });
    assert.ok(results.length > 0);
    for (const failure of sourceFailures) t.diagnostic(`same status unbundled: ${failure}`);
  });

  test('the OpenAPI document as bundled is the one built from source (zod JSON Schema by type)', async () => {
    const served = await invoke(bundleOf('meta/openapi'), httpEvent(routes.openapi), 'pglite:memory');
    const { status, body } = jsonBody(served, 'openapi');
    assert.equal(status, 200);
    assert.deepEqual(body, JSON.parse(JSON.stringify(buildOpenApi(prodConfig()))));
    assert.ok(Object.keys(body.paths as object).length > 10);
  });

  test('the API reference, as bundled, serves its page and the Redoc script it carries', async () => {
    const bundle = bundleOf('meta/api-reference');
    const page = (await invoke(bundle, httpEvent(routes.apiReference), 'pglite:memory')).result!;
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers?.['content-security-policy']), /default-src 'none'/);
    assert.match(String(page.body), /<redoc spec-url="\/v1\/openapi.json">/);
    const script = (await invoke(bundle, httpEvent(routes.apiReferenceScript), 'pglite:memory')).result!;
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers?.['content-type']), /^text\/javascript/);
    assert.equal(
      script.body,
      readFileSync(join(PROJECT_ROOT, 'node_modules/redoc/bundles/redoc.standalone.js'), 'utf8'),
    );
  });

  test("the $default route's function, as bundled, answers what no row matches with 404 {error, message}", async () => {
    const planned = synthesized.stack.plan.filter((p) => p.defaultRoute);
    assert.deepEqual(
      planned.map((p) => p.handler),
      [fallback.handler],
    );
    const event = {
      ...httpEvent(routes.healthcheck),
      routeKey: '$default',
      rawPath: '/v1/auth/cli/authorize',
    };
    event.requestContext.http.method = 'POST';
    event.requestContext.http.path = '/v1/auth/cli/authorize';
    const { status, body } = jsonBody(
      await invoke(bundleOf(fallback.handler), event, 'pglite:memory'),
      'default',
    );
    assert.equal(status, 404);
    assert.deepEqual(body, { error: 'not_found', message: 'No route for POST /v1/auth/cli/authorize.' });
  });

  test('the Data API path works as bundled: signed with environment credentials, DatabaseResuming retried', async () => {
    const seen: Array<{ path: string; authorization: string; sql: string }> = [];
    const server = createServer((req: IncomingMessage, res) => {
      let raw = '';
      req.on('data', (chunk) => {
        raw += chunk;
      });
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as { sql?: string };
        seen.push({
          path: req.url ?? '',
          authorization: String(req.headers.authorization),
          sql: body.sql ?? '',
        });
        if (seen.length === 1) {
          // What a paused Aurora cluster answers first; the bundled client must retry it.
          res.writeHead(400, {
            'content-type': 'application/json',
            'x-amzn-errortype':
              'DatabaseResumingException:http://internal.amazon.com/coral/com.amazonaws.rdsdataservice/',
          });
          res.end(JSON.stringify({ message: 'The Aurora DB instance is resuming after being auto-paused.' }));
          return;
        }
        const one = /^\s*select 1\s*$/i.test(body.sql ?? '');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            records: one ? [[{ longValue: 1 }]] : [],
            columnMetadata: one ? [{ name: '?column?', typeName: 'int4' }] : [],
            numberOfRecordsUpdated: 0,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const dsn = `data-api://controlplane?resourceArn=${FAKE_ARN.cluster}&secretArn=${FAKE_ARN.dbSecret}&region=us-east-1&endpoint=http://127.0.0.1:${port}`;
      const health = jsonBody(
        await invoke(bundleOf('health/healthcheck'), httpEvent(routes.healthcheck), dsn),
        'health',
      );
      assert.equal(health.status, 200, JSON.stringify(health.body));
      assert.equal((health.body.database as { driver: string }).driver, 'data-api');
      assert.ok(seen.length >= 3, 'resumed call retried, then the health queries');
      assert.match(
        seen[0]!.authorization,
        /^AWS4-HMAC-SHA256 Credential=AKIDBUNDLETEST\/\d{8}\/us-east-1\/rds-data\/aws4_request/,
      );
      assert.ok(seen.every((call) => call.path === '/Execute'));
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('the first admin: the migrate bundle reads its password from Secrets Manager by ARN; sign-in works', async () => {
    const password = 'initial-admin-password-from-secrets-manager';
    const fake = await fakeSecretsManager({ [FAKE_ARN.admin]: password });
    try {
      const dataDir = join(work, 'pglite-admin');
      const dsn = `pglite:${dataDir}`;
      const migrated = await invoke(migrateBundle, {}, dsn, {
        env: { AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.url },
      });
      assert.equal(migrated.error, undefined, JSON.stringify(migrated.error) + migrated.stderr);
      const email = migrateBundle.environment.SVC_ADMIN_EMAIL!;
      assert.deepEqual(migrated.result?.admin, { email, created: true });
      assert.deepEqual(fake.calls, [{ target: 'secretsmanager.GetSecretValue', secretId: FAKE_ARN.admin }]);
      assert.match(
        fake.authorizations[0]!,
        /^AWS4-HMAC-SHA256 Credential=AKIDBUNDLETEST\/\d{8}\/us-east-1\/secretsmanager\//,
      );
      const login = jsonBody(
        await invoke(bundleOf('identity/login'), httpEvent(routes.login, { body: { email, password } }), dsn),
        'login',
      );
      assert.equal(login.status, 200, JSON.stringify(login.body));
    } finally {
      await fake.close();
    }
  });

  test('the JWT secret comes from Secrets Manager by its ARN, fetched once per container', async () => {
    const bundle = bundleOf('identity/me');
    assert.ok(bundle.environment[ENV.jwtSecretArn], 'the function is given the secret ARN, not its value');
    const fromSecretsManager = randomSecret();
    const fake = await fakeSecretsManager({ [FAKE_ARN.jwt]: fromSecretsManager });
    try {
      // The token's person is in the users table (every bearer check reads it there).
      const dsn = `pglite:${join(work, 'pglite-me')}`;
      const database = await connectDatabase({ db: { ...prodConfig().db, dsn } });
      await migrate(database.db);
      const ana = await createUser(
        database.db,
        { email: 'ana@bundle.test', name: 'Ana', password: randomSecret(), roles: ['user'] },
        { id: 'test', email: 'test', ipAddress: '' },
      );
      await database.close();
      const { access_token } = await issueLocalToken(
        { auth: { ...prodConfig().auth, jwt_secret: fromSecretsManager } } as Config,
        { subject: ana.id, email: 'ana@bundle.test', name: 'Ana', roles: ['user'] },
      );
      // Two invocations of one container: the secret is fetched once.
      const me = jsonBody(
        await invoke(bundle, httpEvent(routes.me, { token: access_token }), dsn, {
          secretsFromArns: true,
          env: { AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.url, BUNDLE_TEST_INVOCATIONS: '2' },
        }),
        'me',
      );
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.deepEqual(fake.calls, [{ target: 'secretsmanager.GetSecretValue', secretId: FAKE_ARN.jwt }]);
      assert.match(fake.authorizations[0]!, /^AWS4-HMAC-SHA256 Credential=AKIDBUNDLETEST\//);
    } finally {
      await fake.close();
    }
  });

  test('the event archive, as bundled, writes Parquet through the real S3 client (s3rver) to the bucket the stack names', async () => {
    const bundle = bundleOf('observability/archive');
    assert.match(bundle.environment.SVC_ARCHIVE_BUCKET ?? '', /^unresolved:/, 'the stack passes its bucket');
    const dataDir = join(work, 'pglite-archive');
    const database = await connectDatabase({
      db: {
        dsn: `pglite:${dataDir}`,
        max_open_conns: 1,
        max_idle_conns: 0,
        max_idle_time: 1,
        statement_timeout: 60_000,
        resume_wait: 20_000,
      },
    });
    // 30 events in the hour that began three hours ago (closed: events.archive.delay is 1 hour).
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000);
    try {
      await migrate(database.db);
      await database.db.execute(sql`INSERT INTO devices (id, serial_number, brand, model, owner_subject,
          certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
        VALUES ('00000000-0000-4000-8000-0000000000a1', 'SER-A', 'b', 'm', 'o', 'fp-a', 'pem', 'p256', now(), now())`);
      await database.db.execute(sql`INSERT INTO observability_events (event_id, device_id, serial_number, event_time,
          agent_type, mcp_name, tool, event_type, result, duration_ms)
        SELECT gen_random_uuid(), '00000000-0000-4000-8000-0000000000a1', 'SER-A',
          ${hour.toISOString()}::timestamptz + g * interval '1 minute', 'a', 'm', 't', 'invocation', 'allowed', g
        FROM generate_series(0, 29) AS g`);
    } finally {
      await database.close();
    }
    const s3 = await startS3Server('bundle-archive');
    try {
      const invocation = await invoke(bundle, { schedule: 'eventArchive' }, `pglite:${dataDir}`, {
        env: {
          SVC_ARCHIVE_BUCKET: s3.bucket,
          // The real S3 endpoint setting of the SDK (an IP address: path-style requests).
          AWS_ENDPOINT_URL_S3: s3.endpoint,
          AWS_ACCESS_KEY_ID: 'S3RVER',
          AWS_SECRET_ACCESS_KEY: 'S3RVER',
          AWS_SESSION_TOKEN: '',
        },
      });
      assert.equal(invocation.error, undefined, JSON.stringify(invocation.error));
      assert.deepEqual(
        [invocation.result?.target, invocation.result?.hours, invocation.result?.rows],
        ['s3', 1, 30],
      );
      const store = new S3ObjectStore({
        bucket: s3.bucket,
        prefix: prodConfig().events.archive.prefix,
        endpoint: s3.endpoint,
        region: 'us-east-1',
      });
      try {
        const archived = await readArchivedHour(store, prodConfig().events.archive.prefix, hour);
        assert.equal(archived?.manifest.rows, 30);
        const part = archived!.parts[0]!;
        const rows = await parquetReadObjects({
          file: part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength) as ArrayBuffer,
          columns: ['duration_ms'],
        });
        assert.equal(
          rows.reduce((n, r) => n + Number(r.duration_ms), 0),
          435,
          'the sum of 0..29',
        );
      } finally {
        store.close();
      }
    } finally {
      await s3.close();
    }
  });

  test('the log shipper token: only the ingest bundle has its ARN; it reads it from Secrets Manager and takes it', async () => {
    const withArn = [...bundles.values()]
      .filter((b) => ENV.auditIngestTokenArn in b.environment)
      .map((b) => b.planned.handler);
    assert.deepEqual(withArn, [routes.ingestAuditLogs.handler]);
    const bundle = bundleOf(routes.ingestAuditLogs.handler);
    const token = randomSecret();
    const fake = await fakeSecretsManager({
      [FAKE_ARN.jwt]: JWT_SECRET,
      [FAKE_ARN.auditIngest]: token,
      [FAKE_ARN.admin]: 'an admin password for the migration',
    });
    const dsn = `pglite:${join(work, 'pglite-audit-ingest')}`;
    const record = {
      action_type: 'query.executed',
      timestamp: '2026-01-01T00:00:00.000Z',
      actor_email: 'ana@bundle.test',
      resource_type: 'environment',
      resource_id: 'env-1',
    };
    try {
      const migrated = await invoke(migrateBundle, {}, dsn, {
        env: { AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.url },
      });
      assert.equal(migrated.error, undefined, JSON.stringify(migrated.error) + migrated.stderr);
      fake.calls.length = 0;
      const ingest = (bearer: string) =>
        invoke(
          bundle,
          httpEvent(routes.ingestAuditLogs, { token: bearer, body: { records: [record] } }),
          dsn,
          {
            secretsFromArns: true,
            env: { AWS_ENDPOINT_URL_SECRETS_MANAGER: fake.url },
          },
        );
      const accepted = jsonBody(await ingest(token), 'ingest');
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.equal((accepted.body.data as { accepted: number }).accepted, 1);
      const refused = jsonBody(await ingest(`${token}x`), 'ingest with another token');
      assert.equal(refused.status, 401, JSON.stringify(refused.body));
      assert.deepEqual(
        [...new Set(fake.calls.map((c) => c.secretId))].sort(),
        [FAKE_ARN.auditIngest, FAKE_ARN.jwt].sort(),
      );
    } finally {
      await fake.close();
    }
  });

  test('every handler runs as bundled through the Data API on PostgreSQL (TEST_DATABASE_URL)', {
    skip: !testDatabaseUrl() && 'TEST_DATABASE_URL is not set',
  }, async (t) => {
    const { startDataApiServer } = await import('#test/support/data-api-server.ts');
    const database = await createPostgresDatabase();
    const server = await startDataApiServer({ connectionString: database.url, resumingFailures: 1 });
    try {
      const dsn = `data-api://${server.database}?resourceArn=${server.resourceArn}&secretArn=${server.secretArn}&region=us-east-1&endpoint=${server.url}`;
      const { results, sourceFailures } = await runAll({
        dsn,
        forkDsn: () => dsn,
      });
      assert.ok(results.length > 0);
      assert.ok((server.calls.Execute ?? 0) > 0);
      for (const failure of sourceFailures) t.diagnostic(`same status unbundled: ${failure}`);
    } finally {
      await server.close();
      await database.drop();
    }
  });
});

// Keeps the work directory out of the way if a run is interrupted: it sits in node_modules/.cache.
if (!existsSync(join(PROJECT_ROOT, 'node_modules')))
  throw new Error('run from a checkout with node_modules installed');
