// What the bundles leave out by the deployment's config (configStubsFor in infra/bundling.ts): the IdP verifier with
// auth.provider = "local", the environment service client with envsvc.provider = "builtin", the builtin provider with
// "http". Proven both ways: a stand-in reached anyway says which config the bundle was built for, and a deployment
// that picks the other providers (idp, http) bundles what they need and runs it. test/infra/bundles.test.ts runs the
// bundles of config/prod.toml (local, builtin).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { type Config, configSchema } from '#shared/core/config/schema.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database } from '#shared/core/db/database.ts';
import type { RouteSpec } from '#shared/core/http/route.ts';
import { createUser } from '#shared/identity/users.ts';
import { routes } from '#shared/routes.ts';
import { runNode } from '#test/support/child.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { buildSplit } from '../../infra/bundle/split.ts';
import {
  BUILTIN_ENVIRONMENTS_STUB,
  CHUNK_FILE,
  configStubsFor,
  type DeploymentChoices,
  ENTRY_FILE,
  esbuildOptions,
  HTTP_ENVIRONMENTS_STUB,
  IDP_VERIFIER_STUB,
} from '../../infra/bundling.ts';
import { takesBearerToken } from '../../infra/route-tables.ts';
import { LAMBDA_CONFIG_PATH } from '../../infra/settings.ts';
import { PROJECT_ROOT, type Synthesized, synth } from './synth.ts';

const JWT_SECRET = randomSecret();
/** Text of each stand-in's error (infra/bundle/no-*.ts), and of the code it stands for. */
const MARKERS = {
  idpStub: 'IdP tokens are not checked by this bundle',
  httpStub: 'the http environment provider is not bundled',
  builtinStub: 'the builtin environment provider is not bundled',
  oidcVerifier: 'not found in the JWKS',
  httpClient: 'envsvc_unavailable',
  /** Of the builtin provider's provisioning (its views) and of its query sessions (the check that runs first). */
  builtinProvider: ['security_barrier', 'acp: request is '],
};

let work: string;
before(() => {
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  // Inside the project, so that the externals of a bundle (PGlite) resolve from node_modules.
  work = mkdtempSync(join(cache, 'acp-config-stubs-'));
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true, maxRetries: 5 });
});

const configOf = (input: Record<string, unknown>): Config =>
  configSchema.parse({ auth: { jwt_secret: JWT_SECRET }, ...input });

const ALL_PROVIDERS_CONFIG = {
  idp: { auth: { provider: 'idp', jwt_secret: JWT_SECRET, idp_domain: 'idp.test', idp_audience: 'api' } },
  http: { envsvc: { provider: 'http', url: 'https://envsvc.test' } },
};

test('configStubsFor leaves out the providers the config does not pick, and nothing without a config', () => {
  assert.deepEqual(configStubsFor(undefined), []);
  assert.deepEqual(configStubsFor({ authProvider: 'local', envProvider: 'builtin' }), [
    IDP_VERIFIER_STUB,
    HTTP_ENVIRONMENTS_STUB,
  ]);
  assert.deepEqual(configStubsFor({ authProvider: 'idp', envProvider: 'http' }), [BUILTIN_ENVIRONMENTS_STUB]);
  assert.deepEqual(configStubsFor({ authProvider: 'idp', envProvider: 'builtin' }), [HTTP_ENVIRONMENTS_STUB]);
});

describe('a stand-in reached anyway says which config the bundle was built for', () => {
  type Bundled = {
    authenticate: typeof import('#shared/core/auth/authenticate.ts').authenticate;
    setLogSink: typeof import('#shared/core/logger.ts').setLogSink;
    providerFor: typeof import('#shared/requests/environments.ts').providerFor;
    querierFor: typeof import('#shared/requests/environments.ts').querierFor;
  };
  /** The authenticator and the provider factories, bundled as a function of `deployment` bundles them. */
  async function bundledFor(name: string, deployment: DeploymentChoices): Promise<Bundled> {
    const entry = join(work, `${name}.ts`);
    const from = (file: string) => JSON.stringify(join(PROJECT_ROOT, file));
    writeFileSync(
      entry,
      [
        `export { authenticate } from ${from('shared/core/auth/authenticate.ts')};`,
        `export { setLogSink } from ${from('shared/core/logger.ts')};`,
        `export { providerFor, querierFor } from ${from('shared/requests/environments.ts')};`,
        '',
      ].join('\n'),
    );
    const dir = join(work, name);
    const split = esbuildOptions({ entry, stagingDir: work, sourceMap: false, deployment }, PROJECT_ROOT);
    const result = await buildSplit(split, dir, { metafile: true, logLevel: 'silent' });
    for (const stub of configStubsFor(deployment)) assert.ok(stub.stub in result.metafile!.inputs, stub.stub);
    return (await import(pathToFileURL(join(dir, ENTRY_FILE)).href)) as Bundled;
  }
  const database = {} as Database;

  test('built for auth.provider = "local" and envsvc.provider = "builtin"', async () => {
    const bundled = await bundledFor('local-builtin', { authProvider: 'local', envProvider: 'builtin' });
    const lines: string[] = [];
    const previous = bundled.setLogSink((line) => lines.push(line));
    try {
      // A token that is not a local one goes to the IdP in idp mode: here the stand-in, which logs and refuses.
      await assert.rejects(
        bundled.authenticate(configOf(ALL_PROVIDERS_CONFIG.idp), { authorization: 'Bearer a.b.c' }),
        (err: { kind?: string; code?: string }) =>
          err.kind === 'unauthenticated' && err.code === 'invalid_token',
      );
    } finally {
      bundled.setLogSink(previous);
    }
    assert.equal(lines.length, 1, lines.join('\n'));
    const logged = JSON.parse(lines[0]!) as { level: string; message: string };
    assert.equal(logged.level, 'ERROR');
    assert.match(
      logged.message,
      /IdP tokens are not checked by this bundle: it was built for auth\.provider = "local"/,
    );
    const http = configOf(ALL_PROVIDERS_CONFIG.http);
    assert.throws(() => bundled.providerFor(database, http), /built for envsvc\.provider = "builtin"/);
    assert.throws(() => bundled.querierFor(database, http), /built for envsvc\.provider = "builtin"/);
  });

  test('built for envsvc.provider = "http"', async () => {
    const bundled = await bundledFor('idp-http', { authProvider: 'idp', envProvider: 'http' });
    const builtin = configOf({});
    assert.throws(() => bundled.providerFor(database, builtin), /built for envsvc\.provider = "http"/);
    assert.throws(() => bundled.querierFor(database, builtin), /built for envsvc\.provider = "http"/);
  });
});

describe('a deployment with auth.provider = "idp" and envsvc.provider = "http"', () => {
  let synthesized: Synthesized;
  const assetDirs = new Map<string, string>();

  before(() => {
    const prod = readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8');
    assert.match(prod, /^provider = "local"$/m, 'this test turns config/prod.toml to idp');
    assert.doesNotMatch(prod, /^\[envsvc\]/m, 'this test appends its own [envsvc] table');
    const configFile = join(work, 'idp-http.toml');
    writeFileSync(
      configFile,
      `${prod.replace(
        /^provider = "local"$/m,
        'provider = "idp"\nidp_domain = "tenant.example-idp.com"\nidp_audience = "https://api.example.com"',
      )}\n[envsvc]\nprovider = "http"\nurl = "https://envsvc.example.com"\n`,
    );
    synthesized = synth({ configFile, bundle: true, sourceMaps: false, outdir: join(work, 'cdk.out') });
    assert.equal(synthesized.deployment.config.auth.provider, 'idp');
    assert.equal(synthesized.deployment.config.envsvc.provider, 'http');
    const resources = synthesized.template.toJSON().Resources as Record<
      string,
      { Metadata?: Record<string, string> }
    >;
    const functions: Array<[string, CfnElement]> = [
      ...synthesized.stack.plan.map(
        (planned) =>
          [
            planned.handler,
            synthesized.stack.functions.get(planned.handler)!.node.defaultChild as CfnElement,
          ] as [string, CfnElement],
      ),
      ['migrate', synthesized.stack.migrateFunction.node.defaultChild as CfnElement],
    ];
    for (const [handler, element] of functions) {
      const assetPath = resources[synthesized.stack.getLogicalId(element)]?.Metadata?.['aws:asset:path'];
      assert.ok(assetPath, handler);
      const dir = join(work, 'bundles', handler.replace('/', '-'));
      cpSync(join(synthesized.outdir, assetPath), dir, { recursive: true });
      assetDirs.set(handler, dir);
    }
  });

  const codeOf = (dir: string) =>
    readdirSync(dir)
      .filter((file) => file === ENTRY_FILE || CHUNK_FILE.test(file))
      .map((file) => readFileSync(join(dir, file), 'utf8'))
      .join('\n');

  test('each bundle carries what the config picks and no stand-in for it', () => {
    let environmentUsers = 0;
    for (const planned of synthesized.stack.plan) {
      const code = codeOf(assetDirs.get(planned.handler)!);
      const bearer = takesBearerToken(planned.entry, PROJECT_ROOT);
      assert.equal(code.includes(MARKERS.oidcVerifier), bearer, `${planned.handler}: the OIDC verifier`);
      assert.ok(!code.includes(MARKERS.idpStub), planned.handler);
      assert.ok(!code.includes(MARKERS.httpStub), planned.handler);
      // The functions that call the environment service carry its client, and not the builtin provider.
      assert.equal(code.includes(MARKERS.httpClient), planned.usesEnvironmentService, planned.handler);
      if (planned.usesEnvironmentService) {
        environmentUsers++;
        for (const marker of MARKERS.builtinProvider) {
          assert.ok(!code.includes(marker), `${planned.handler} bundles the builtin provider (${marker})`);
        }
      }
    }
    assert.ok(environmentUsers > 0);
  });

  test('every bundle loads, with all its chunks', async () => {
    const loader = join(work, 'load.mjs');
    writeFileSync(
      loader,
      [
        "import { readdirSync } from 'node:fs';",
        "import { join } from 'node:path';",
        'const [dir] = process.argv.slice(2);',
        "const m = await import(join(dir, 'index.mjs'));",
        "if (typeof m.handler !== 'function') process.exit(3);",
        'for (const f of readdirSync(dir)) if (/^chunk-.*\\.mjs$/.test(f)) await import(join(dir, f));',
        '',
      ].join('\n'),
    );
    for (const [handler, dir] of assetDirs) {
      const { code, stderr } = await run(loader, [dir], {}, dir);
      assert.equal(code, 0, `${handler}: ${stderr}`);
    }
  });

  test('the query function runs: local tokens checked (HS256), IdP tokens go to the verifier, queries to the service', async () => {
    const dataDir = join(work, 'pglite');
    const dsn = `pglite:${dataDir}`;
    const migrated = await invoke(assetDirs.get('migrate')!, {}, dsn);
    assert.equal(migrated.error, undefined, JSON.stringify(migrated));

    const query = assetDirs.get('requests/query')!;
    const config = synthesized.deployment.config;
    // The token's person exists (every bearer check reads it from users).
    const database = await connectDatabase({ db: { ...config.db, dsn } });
    const ana = await createUser(
      database.db,
      { email: 'ana@config-stubs.test', name: 'Ana', password: randomSecret(), roles: ['user'] },
      { id: 'test', email: 'test', ipAddress: '' },
    );
    await database.close();
    const { access_token } = await issueLocalToken(
      { ...config, auth: { ...config.auth, jwt_secret: JWT_SECRET } },
      { subject: ana.id, email: ana.email, name: 'Ana', roles: ['user'] },
    );
    // A local token is accepted; the request does not exist (the http querier was built without complaint).
    const unknown = await invoke(query, queryEvent(access_token), dsn);
    assert.equal(unknown.result?.statusCode, 404, JSON.stringify(unknown));
    // Any other token goes to the OIDC verifier, which refuses this one without fetching keys.
    const idp = await invoke(query, queryEvent('a.b.c'), dsn);
    assert.equal(idp.result?.statusCode, 401, JSON.stringify(idp));
    assert.ok(!idp.stdout.includes(MARKERS.idpStub), idp.stdout);
  });
});

const run = (script: string, args: string[], env: Record<string, string>, cwd: string) =>
  runNode([script, ...args], { cwd, env: { TZ: 'UTC', ...env } });

interface Invocation {
  result?: { statusCode?: number; body?: string };
  error?: { name?: string; message?: string };
  stdout: string;
}

/** Calls the handler of the bundle in `dir` in a fresh Node process, with its config and the test's secrets. */
async function invoke(dir: string, event: unknown, dsn: string): Promise<Invocation> {
  const runner = join(work, 'invoke.mjs');
  writeFileSync(
    runner,
    [
      "import { readFileSync, writeFileSync } from 'node:fs';",
      "import { pathToFileURL } from 'node:url';",
      'const [bundle, eventFile, resultFile] = process.argv.slice(2);',
      'const mod = await import(pathToFileURL(bundle).href);',
      "const context = { awsRequestId: 'config-stubs', functionName: 'config-stubs', functionVersion: '$LATEST',",
      "  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:config-stubs', memoryLimitInMB: '512',",
      "  logGroupName: 'config-stubs', logStreamName: 'config-stubs', callbackWaitsForEmptyEventLoop: false,",
      '  getRemainingTimeInMillis: () => 20000, done() {}, fail() {}, succeed() {} };',
      'let outcome;',
      "try { outcome = { result: await mod.handler(JSON.parse(readFileSync(eventFile, 'utf8')), context) }; }",
      'catch (err) { outcome = { error: { name: err?.name, message: err?.message } }; }',
      'writeFileSync(resultFile, JSON.stringify(outcome ?? {}));',
      'process.exit(0);',
      '',
    ].join('\n'),
  );
  const id = randomUUID();
  const eventFile = join(work, `${id}.event.json`);
  const resultFile = join(work, `${id}.result.json`);
  writeFileSync(eventFile, JSON.stringify(event));
  const { code, stdout, stderr } = await run(
    runner,
    [join(dir, ENTRY_FILE), eventFile, resultFile],
    {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDCONFIGSTUBS',
      AWS_SECRET_ACCESS_KEY: 'config-stubs-secret-key',
      SVC_CONFIG: join(dir, basename(LAMBDA_CONFIG_PATH)),
      SVC_DB_DSN: dsn,
      SVC_JWT_SECRET: JWT_SECRET,
      SVC_ENVSVC_TOKEN: randomSecret(),
    },
    dir,
  );
  assert.equal(code, 0, stderr);
  return { ...(JSON.parse(readFileSync(resultFile, 'utf8')) as Omit<Invocation, 'stdout'>), stdout };
}

function queryEvent(token: string) {
  const route: RouteSpec = routes.queryRequest;
  const id = randomUUID();
  const path = route.path.replace('{id}', id);
  const body = JSON.stringify({ sql: 'SELECT 1' });
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: 'config-stubs.test',
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    },
    pathParameters: { id },
    requestContext: {
      http: { method: route.method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}
