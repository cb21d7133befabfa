// Template assertions on the synthesized stack. Expectations are computed from the route table and the config,
// never hard-coded, so rows added by other issues are checked by the same assertions.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { build } from 'esbuild';
import { parse as parseToml } from 'smol-toml';
import type { Config } from '#shared/core/config/schema.ts';
import { ARCHIVE_COLUMNS, GLUE_TYPES } from '#shared/observability/archive/parquet.ts';
import { oldestAcceptedEventTime } from '#shared/observability/retention.ts';
import { fallback, routeList, type ScheduleId, scheduleRuns, schedules } from '#shared/routes.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { ARCHIVE_TABLE } from '../../infra/constructs/event-archive.ts';
import { SIGNIN_ROUTES } from '../../infra/constructs/http-api.ts';
import { DATA_API_ACTIONS } from '../../infra/constructs/network-and-database.ts';
import { ENV } from '../../infra/constructs/service-function.ts';
import { SIZING } from '../../infra/plan.ts';
import { rateExpression } from '../../infra/rate.ts';
import { ARCHIVE_HANDLER, ARCHIVE_READERS, ARCHIVE_TIERING_DAYS, EVENTS_ROUTE } from '../../infra/stack.ts';
import { nagReport } from './nag.ts';
import { PROJECT_ROOT, type Synthesized, synth } from './synth.ts';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Json;
}

const scratch = mkdtempSync(join(tmpdir(), 'acp-infra-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// One synthesis (no bundling) shared by every assertion of this file.
const prod = synth();
const resources = prod.template.toJSON().Resources as Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
// As deployed: without a dashboard_url of its own, config/prod.toml gets the console's (infra/stack.ts).
const config: Config = { ...prod.deployment.config, dashboard_url: prod.stack.dashboardUrl };

const mountedRows = routeList.filter(([, route]) => !route.mountedWhen || route.mountedWhen(config));
const runningSchedules = (Object.keys(schedules) as ScheduleId[]).filter((id) => scheduleRuns(id, config));
const scheduledHandlers = runningSchedules.map((id) => schedules[id].handler);
const expectedHandlers = new Set([
  ...mountedRows.map(([, route]) => route.handler),
  ...scheduledHandlers,
  fallback.handler,
]);

/** The service's functions (the stack's own, not CDK's providers): they read SVC_CONFIG. */
const serviceFunctions = ofType('AWS::Lambda::Function').filter(([, r]) => {
  const variables = (r.Properties.Environment as { Variables?: Json } | undefined)?.Variables ?? {};
  return ENV.config in variables;
});
/**
 * Of a synthesized stack, the functions whose role may read the secret `secretId`, and those given its ARN in
 * `variable` (checked to be that secret), each sorted.
 */
function secretAccess(
  synthesized: ReturnType<typeof synth>,
  secretId: string,
  variable: string,
): { readers: string[]; withArn: string[] } {
  const all = synthesized.template.toJSON().Resources as Record<string, Resource>;
  const readers: string[] = [];
  const withArn: string[] = [];
  for (const planned of synthesized.stack.plan) {
    const logicalId = synthesized.stack.getLogicalId(
      synthesized.stack.functions.get(planned.handler)!.node.defaultChild as import('aws-cdk-lib').CfnElement,
    );
    const fn = all[logicalId]!;
    const roleId = getAttOf(fn.Properties.Role)!;
    const statements = Object.values(all)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((p) => (p.Properties.Roles as unknown[]).some((r) => refOf(r) === roleId))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Json[] }).Statement);
    if (JSON.stringify(statements).includes(`"Ref":"${secretId}"`)) readers.push(planned.handler);
    const variables = (fn.Properties.Environment as { Variables: Json }).Variables;
    if (variable in variables) {
      assert.equal(refOf(variables[variable]), secretId, planned.handler);
      withArn.push(planned.handler);
    }
  }
  return { readers: readers.sort(), withArn: withArn.sort() };
}

/** The routes each stack must have room for, beyond today's. */
const MORE_ROUTES = 60;
/** A route to a function of its own: function, role, policy, log group, integration, permission, route. */
const ROUTE_WITH_OWN_FUNCTION = 7;

const functionOf = (handler: string) => {
  const logicalId = prod.stack.getLogicalId(
    prod.stack.functions.get(handler)!.node.defaultChild as import('aws-cdk-lib').CfnElement,
  );
  return { logicalId, resource: resources[logicalId]! };
};
const refOf = (value: unknown) => (value as { Ref?: string }).Ref;
const getAttOf = (value: unknown) => (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt']?.[0];

test('one function per distinct handler of the mounted rows and the schedules (aliases share theirs)', () => {
  assert.ok(mountedRows.length > 0);
  assert.equal(serviceFunctions.length, expectedHandlers.size);
  assert.deepEqual(new Set(prod.stack.functions.keys()), expectedHandlers);
  for (const handler of expectedHandlers) {
    const { resource } = functionOf(handler);
    assert.match(String(resource.Properties.Description), new RegExp(`^${handler} \\(`));
  }
});

test('one API route per mounted row, each to the function of its handler, and $default to the fallback', () => {
  const routes = ofType('AWS::ApiGatewayV2::Route');
  assert.equal(routes.length, mountedRows.length + 1);
  const integrations = new Map(ofType('AWS::ApiGatewayV2::Integration'));
  const [, defaultRoute] = routes.find(([, r]) => r.Properties.RouteKey === '$default') ?? [];
  assert.ok(defaultRoute, 'no $default route');
  const defaultIntegration = JSON.stringify(defaultRoute.Properties.Target).match(/"Ref":"([^"]+)"/)?.[1];
  assert.equal(
    getAttOf(integrations.get(defaultIntegration ?? '')?.Properties.IntegrationUri),
    functionOf(fallback.handler).logicalId,
  );
  const keys = new Set(routes.map(([, r]) => r.Properties.RouteKey));
  for (const [, route] of mountedRows) assert.ok(keys.has(`${route.method} ${route.path}`), route.path);
  for (const [id, route] of mountedRows) {
    const [, routeResource] = routes.find(
      ([, r]) => r.Properties.RouteKey === `${route.method} ${route.path}`,
    )!;
    const target = String(routeResource.Properties.Target);
    const integrationId = JSON.stringify(routeResource.Properties.Target).match(/"Ref":"([^"]+)"/)?.[1];
    assert.ok(integrationId, `${id}: ${target}`);
    const integration = integrations.get(integrationId)!;
    assert.equal(integration.Properties.PayloadFormatVersion, '2.0');
    assert.equal(getAttOf(integration.Properties.IntegrationUri), functionOf(route.handler).logicalId);
  }
});

test('one integration per function, and each stack stays within CloudFormation limits with room to grow', (t) => {
  const withRoutes = prod.stack.plan.filter((p) => p.routes.length > 0 || p.defaultRoute);
  assert.equal(ofType('AWS::ApiGatewayV2::Integration').length, withRoutes.length);
  // Invoke permissions: one per function for the API's routes, and one for $default (plus EventBridge's for the
  // schedules).
  const apiPermissions = ofType('AWS::Lambda::Permission').filter(
    ([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com',
  );
  assert.equal(apiPermissions.length, withRoutes.filter((p) => p.routes.length > 0).length + 1);
  // Each stack stays within CloudFormation's limits, with room for MORE_ROUTES routes more: in the root stack, each
  // new feature costs one resource (its nested stack); in a feature's stack, a route costs what each way in (a route,
  // or a function reached only by a schedule or $default) costs on average now: the function, role, policy, log
  // group, integration and permission its routes share, and the route. Also printed: how many routes it takes when
  // each brings a function of its own (ROUTE_WITH_OWN_FUNCTION resources).
  for (const { path, logicalId, template } of prod.stacks) {
    const count = Object.keys(template.Resources).length;
    const ofType = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type).length;
    const routes = ofType('AWS::ApiGatewayV2::Route');
    const waysIn = routes + ofType('AWS::Lambda::Function') - ofType('AWS::ApiGatewayV2::Integration');
    const perRoute = logicalId === undefined ? 1 : count / Math.max(waysIn, 1);
    const parameters = Object.keys(template.Parameters ?? {}).length;
    const outputs = Object.keys(template.Outputs ?? {}).length;
    const size = JSON.stringify(template).length;
    t.diagnostic(
      `${path}: ${count} resources, ${routes} routes, ${parameters} parameters, ${outputs} outputs, ${size} bytes; ` +
        `with ${MORE_ROUTES} more routes: ${Math.round(count + MORE_ROUTES * perRoute)}` +
        (logicalId === undefined
          ? ''
          : `; routes with a function each: ${Math.floor((499 - count) / ROUTE_WITH_OWN_FUNCTION)} more`),
    );
    assert.ok(count + MORE_ROUTES * perRoute < 500, `${path}: ${count} resources, ${perRoute} per route`);
    // Even if every new route brings a function of its own, a feature's stack takes 50 more before it must split
    // (a sub-feature folder gets a stack of its own: docs/operations.md).
    if (logicalId !== undefined) {
      const own = Math.floor((499 - count) / ROUTE_WITH_OWN_FUNCTION);
      assert.ok(own >= 50, `${path}: room for ${own} routes with a function each`);
    }
    assert.ok(parameters < 60, `${path}: ${parameters} parameters (CloudFormation takes 200)`);
    assert.ok(outputs < 150, `${path}: ${outputs} outputs (CloudFormation takes 200)`);
    assert.ok(size < 1_000_000, `${path}: CloudFormation refuses templates over 1 MB`);
  }
  t.diagnostic(
    `${mountedRows.length} routes and ${serviceFunctions.length} functions in ${prod.stacks.length} stacks`,
  );
});

test('rows whose mountedWhen is false get no route (CLI sign-in needs dashboard_url)', () => {
  const conditional = routeList.filter(([, route]) => route.mountedWhen);
  if (conditional.length === 0) return;
  const withoutDashboard = synth({ configFile: 'config/local.toml' });
  const localConfig = withoutDashboard.deployment.config;
  const mounted = routeList.filter(([, route]) => !route.mountedWhen || route.mountedWhen(localConfig));
  // Plus $default, which answers the unmounted ones 404 not_found.
  withoutDashboard.template.resourceCountIs('AWS::ApiGatewayV2::Route', mounted.length + 1);
});

test('runtime, architecture, memory, timeout and a log group with retention per function', () => {
  const logGroups = new Map(ofType('AWS::Logs::LogGroup'));
  for (const planned of prod.stack.plan) {
    const { resource } = functionOf(planned.handler);
    const p = resource.Properties;
    assert.equal(p.Runtime, 'nodejs24.x', planned.handler);
    assert.deepEqual(p.Architectures, ['arm64'], planned.handler);
    assert.equal(p.Handler, 'index.handler');
    const expected = SIZING[planned.kind];
    assert.equal(p.MemorySize, expected.memoryMb, planned.handler);
    assert.equal(p.Timeout, expected.timeoutSeconds, planned.handler);
    if (planned.routes.length > 0)
      assert.ok((p.Timeout as number) < 29, `${planned.handler} exceeds API Gateway`);
    const logGroupId = refOf((p.LoggingConfig as Json).LogGroup);
    assert.ok(logGroupId, planned.handler);
    assert.equal(
      logGroups.get(logGroupId)?.Properties.RetentionInDays,
      prod.deployment.aws.log_retention_days,
    );
    // Each function has its own log group.
    assert.equal(
      serviceFunctions.filter(([, r]) => refOf((r.Properties.LoggingConfig as Json).LogGroup) === logGroupId)
        .length,
      1,
    );
  }
  const kinds = new Map(mountedRows.map(([, route]) => [route.handler, route.kind ?? 'read']));
  for (const [handler, kind] of kinds) {
    const planned = prod.stack.plan.find((p) => p.handler === handler)!;
    assert.ok(SIZING[planned.kind].memoryMb >= SIZING[kind].memoryMb, handler);
  }
});

test('environment: the Data API DSN, the bundled config, secret ARNs and never a secret value', () => {
  for (const [logicalId, resource] of serviceFunctions) {
    const variables = (resource.Properties.Environment as { Variables: Json }).Variables;
    assert.equal(variables[ENV.config], '/var/task/config.json');
    const dsn = JSON.stringify(variables[ENV.dsn]);
    assert.match(dsn, /data-api:\/\/controlplane\?resourceArn=arn:/, logicalId);
    assert.match(dsn, /:cluster:/);
    assert.match(dsn, /&secretArn=/);
    assert.ok(refOf(variables[ENV.jwtSecretArn]), logicalId);
    for (const name of Object.keys(variables))
      assert.doesNotMatch(name, /^SVC_JWT_SECRET$|PASSWORD|TOKEN$/, name);
  }
});

test('no secret value reaches the template, even from a config file that holds one', () => {
  // config/local.toml with a secret of its own (the committed file holds none).
  const secret = randomSecret();
  const file = join(scratch, 'local-with-secret.toml');
  const localToml = readFileSync(join(PROJECT_ROOT, 'config/local.toml'), 'utf8');
  assert.match(localToml, /^\[auth\]$/m);
  writeFileSync(file, localToml.replace(/^\[auth\]$/m, `[auth]\njwt_secret = "${secret}"`));
  assert.equal(
    (parseToml(readFileSync(file, 'utf8')) as { auth: { jwt_secret: string } }).auth.jwt_secret,
    secret,
  );
  const local = synth({ configFile: file });
  assert.ok(!local.templateText.includes(secret));
  assert.ok(!local.deployment.lambdaConfigToml.includes(secret));
  assert.ok(!prod.templateText.includes('"SecretString"'));
  for (const [, secretResource] of ofType('AWS::SecretsManager::Secret')) {
    assert.ok(secretResource.Properties.GenerateSecretString, 'secrets are generated, never given');
  }
});

test('a prod config carrying a secret is refused', () => {
  const jwt = join(scratch, 'jwt.toml');
  writeFileSync(jwt, `env = "prod"\n[auth]\njwt_secret = "${randomSecret()}"\n`);
  assert.throws(() => synth({ configFile: jwt }), /auth\.jwt_secret must not be in a prod config/);
  const admin = join(scratch, 'admin.toml');
  writeFileSync(admin, `env = "prod"\n[bootstrap]\nadmin_password = "a long enough password"\n`);
  assert.throws(() => synth({ configFile: admin }), /bootstrap\.admin_password must not be in a prod config/);
  const envsvc = join(scratch, 'envsvc-token.toml');
  writeFileSync(
    envsvc,
    `env = "prod"\n[envsvc]\nprovider = "http"\nurl = "https://envsvc.example.com"\ntoken = "issued-token"\n`,
  );
  assert.throws(() => synth({ configFile: envsvc }), /envsvc\.token must not be in a prod config/);
  const ingest = join(scratch, 'audit-ingest-token.toml');
  writeFileSync(ingest, `env = "prod"\n[audit]\ningest_token = "${randomSecret()}"\n`);
  assert.throws(() => synth({ configFile: ingest }), /audit\.ingest_token must not be in a prod config/);
});

test("the log shipper's token: a generated secret that only the audit ingest function can read, and its output", () => {
  const tokens = ofType('AWS::SecretsManager::Secret').filter(([, r]) =>
    String(r.Properties.Description).includes('audit.ingest_token'),
  );
  assert.equal(tokens.length, 1);
  const [tokenId, token] = tokens[0]!;
  assert.ok(token.Properties.GenerateSecretString, 'generated, never given');
  const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  assert.equal(refOf(outputs.AuditIngestTokenSecretArn?.Value), tokenId);
  const { readers, withArn } = secretAccess(prod, tokenId, ENV.auditIngestTokenArn);
  // The route table names the one route that takes this token; its function alone reads it.
  const takers = routeList
    .filter(([, r]) => r.serviceToken === 'audit.ingest_token')
    .map(([, r]) => r.handler);
  assert.deepEqual(takers, ['audit/ingest']);
  assert.deepEqual(readers, takers);
  assert.deepEqual(withArn, takers);
  assert.doesNotMatch(
    prod.deployment.lambdaConfigToml,
    /ingest_token/,
    'the bundled config carries no token',
  );
});

test('Aurora PostgreSQL Serverless v2: capacity 0 to max with auto-pause, Data API, encryption, backups', () => {
  const [[, cluster]] = ofType('AWS::RDS::DBCluster') as [[string, Resource]];
  const p = cluster.Properties;
  assert.equal(p.Engine, 'aurora-postgresql');
  assert.match(String(p.EngineVersion), /^17\./);
  assert.deepEqual(p.ServerlessV2ScalingConfiguration, {
    MinCapacity: 0,
    MaxCapacity: prod.deployment.aws.db_max_acu,
    SecondsUntilAutoPause: prod.deployment.aws.db_auto_pause / 1000,
  });
  assert.equal(p.EnableHttpEndpoint, true);
  assert.equal(p.StorageEncrypted, true);
  assert.equal(p.BackupRetentionPeriod, prod.deployment.aws.db_backup_retention / 86_400_000);
  assert.ok(
    p.MasterUserSecret === undefined &&
      JSON.stringify(p.MasterUserPassword).includes('resolve:secretsmanager'),
  );
  // env = "prod": protected and kept.
  assert.equal(config.env, 'prod');
  assert.equal(p.DeletionProtection, true);
  assert.equal(cluster.DeletionPolicy, 'Retain');
  const instances = ofType('AWS::RDS::DBInstance');
  assert.equal(instances.length, 1);
  assert.equal(instances[0]![1].Properties.DBInstanceClass, 'db.serverless');
  // Isolated subnets only: no NAT, no internet gateway.
  prod.template.resourceCountIs('AWS::EC2::NatGateway', 0);
  prod.template.resourceCountIs('AWS::EC2::InternetGateway', 0);
  // The functions stay outside the VPC.
  for (const [, fn] of serviceFunctions) assert.equal(fn.Properties.VpcConfig, undefined);
});

test('AWS settings come from the context: max capacity follows it', () => {
  const bigger = synth({ context: { dbMaxAcu: 8, logRetentionDays: 90 } });
  bigger.template.hasResourceProperties('AWS::RDS::DBCluster', {
    ServerlessV2ScalingConfiguration: Match.objectLike({ MinCapacity: 0, MaxCapacity: 8 }),
  });
  bigger.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
});

test('non-prod stacks stay removable', () => {
  const local = synth({ configFile: 'config/local.toml' });
  local.template.hasResource('AWS::RDS::DBCluster', {
    Properties: Match.objectLike({ DeletionProtection: false }),
    DeletionPolicy: 'Snapshot',
  });
});

test('the probe schedule follows health.probe_interval; change the config, the expression changes', () => {
  const probeRule = (template: typeof prod.template) =>
    Object.values(template.findResources('AWS::Events::Rule')).find((rule) =>
      String((rule as Resource).Properties.Description).startsWith('health/probe'),
    ) as Resource;
  assert.equal(
    probeRule(prod.template).Properties.ScheduleExpression,
    rateExpression(config.health.probe_interval),
  );
  assert.equal(rateExpression(config.health.probe_interval), 'rate(30 minutes)');

  const text = readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8');
  for (const [interval, expression] of [
    ['1h', 'rate(1 hour)'],
    ['90m', 'rate(90 minutes)'],
    ['2d', 'rate(2 days)'],
  ] as const) {
    const file = join(scratch, `probe-${interval}.toml`);
    writeFileSync(file, text.replace(/probe_interval = "[^"]*"/, `probe_interval = "${interval}"`));
    const changed = synth({ configFile: file });
    assert.equal(probeRule(changed.template).Properties.ScheduleExpression, expression);
  }
});

const scheduleRule = (template: typeof prod.template, handler: string) =>
  Object.values(template.findResources('AWS::Events::Rule')).find((rule) =>
    String((rule as Resource).Properties.Description).startsWith(`${handler} `),
  ) as Resource;

for (const { id, key, every, to5m } of [
  {
    id: 'requestExpiry',
    key: 'requests.expiry_interval',
    every: config.requests.expiry_interval,
    // prod.toml has no [requests] table: append one.
    to5m: (text: string) => {
      assert.doesNotMatch(text, /^\[requests\]/m, 'this test appends its own [requests] table');
      return `${text}\n[requests]\nexpiry_interval = "5m"\n`;
    },
  },
  {
    id: 'rollupFold',
    key: 'events.fold_interval',
    every: config.events.fold_interval,
    // prod.toml sets it in its [events] table: change that line.
    to5m: (text: string) => {
      assert.match(text, /^fold_interval = /m);
      return text.replace(/^fold_interval = .*$/m, 'fold_interval = "5m"');
    },
  },
  {
    id: 'eventPartitions',
    key: 'events.maintenance_interval',
    every: config.events.maintenance_interval,
    to5m: (text: string) => {
      assert.match(text, /^maintenance_interval = /m);
      return text.replace(/^maintenance_interval = .*$/m, 'maintenance_interval = "5m"');
    },
  },
] as const) {
  test(`the ${id} schedule follows ${key}`, () => {
    const { handler } = schedules[id];
    assert.equal(scheduleRule(prod.template, handler).Properties.ScheduleExpression, rateExpression(every));
    const file = join(scratch, `${id}-5m.toml`);
    writeFileSync(file, to5m(readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8')));
    assert.equal(
      scheduleRule(synth({ configFile: file }).template, handler).Properties.ScheduleExpression,
      'rate(5 minutes)',
    );
  });
}

test('envsvc.provider = "http": a token secret, read only by the functions whose code calls the service', async () => {
  const text = readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8');
  assert.doesNotMatch(text, /^\[envsvc\]/m, 'this test appends its own [envsvc] table');
  const file = join(scratch, 'envsvc-http.toml');
  writeFileSync(file, `${text}\n[envsvc]\nprovider = "http"\nurl = "https://envsvc.example.com"\n`);
  const http = synth({ configFile: file });
  assert.equal(http.deployment.config.envsvc.provider, 'http');
  const httpResources = http.template.toJSON().Resources as Record<string, Resource>;
  const tokens = Object.entries(httpResources).filter(
    ([, r]) =>
      r.Type === 'AWS::SecretsManager::Secret' &&
      String(r.Properties.Description).includes('environment service'),
  );
  assert.equal(tokens.length, 1);
  const [tokenId, token] = tokens[0]!;
  assert.ok(token.Properties.GenerateSecretString, 'a placeholder is generated, never given');
  assert.doesNotMatch(
    http.deployment.lambdaConfigToml,
    /^\s*token\s*=/m,
    'the bundled config carries no token',
  );
  const outputs = http.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  assert.equal(refOf(outputs.EnvServiceTokenSecretArn?.Value), tokenId);

  // Who calls the service, found independently of the stack: esbuild's module graph of each handler.
  const callers = new Set<string>();
  for (const planned of http.stack.plan) {
    const result = await build({
      entryPoints: [planned.entry],
      absWorkingDir: PROJECT_ROOT,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'silent',
      plugins: [
        {
          name: 'packages-external',
          setup(b) {
            b.onResolve({ filter: /^[^.#/]/ }, (args) => ({ path: args.path, external: true }));
          },
        },
      ],
    });
    if ('shared/requests/environments/http.ts' in result.metafile.inputs) callers.add(planned.handler);
  }
  assert.ok(callers.size > 0, 'some function calls the environment service');

  const { readers, withArn } = secretAccess(http, tokenId, ENV.envServiceTokenArn);
  assert.deepEqual(readers, [...callers].sort());
  assert.deepEqual(withArn, [...callers].sort());
});

test('each schedule target retries and has a dead-letter queue; so does the async invocation', () => {
  // The schedules' rules (the alert bus has a rule of its own: test/infra/alert-events.test.ts).
  const rules = ofType('AWS::Events::Rule').filter(([, r]) => r.Properties.ScheduleExpression);
  const scheduled = prod.stack.plan.filter((p) => p.schedules.length > 0);
  assert.equal(
    rules.length,
    scheduled.reduce((n, p) => n + p.schedules.length, 0),
  );
  // One rule per row of the schedules table, named after it.
  for (const id of runningSchedules) {
    const row = schedules[id];
    assert.ok(
      rules.some(([, r]) => String(r.Properties.Description).startsWith(`${row.handler} `)),
      `no rule for schedules.${id}`,
    );
  }
  const queues = new Set(ofType('AWS::SQS::Queue').map(([id]) => id));
  for (const [, rule] of rules) {
    const [target] = rule.Properties.Targets as Json[];
    assert.ok((target!.RetryPolicy as Json).MaximumRetryAttempts);
    assert.ok(queues.has(getAttOf((target!.DeadLetterConfig as Json).Arn)!));
  }
  const invokeConfigs = ofType('AWS::Lambda::EventInvokeConfig');
  assert.equal(invokeConfigs.length, scheduled.length);
  for (const [, invokeConfig] of invokeConfigs) {
    const destination = (invokeConfig.Properties.DestinationConfig as { OnFailure: { Destination: unknown } })
      .OnFailure;
    assert.ok(queues.has(getAttOf(destination.Destination)!));
  }
  for (const [, queue] of ofType('AWS::SQS::Queue'))
    assert.equal(queue.Properties.SqsManagedSseEnabled, true);
});

test('HTTP API: CORS from cors.allowed_origins, access logs, default throttling', () => {
  prod.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
    ProtocolType: 'HTTP',
    CorsConfiguration: Match.objectLike({
      AllowOrigins: [...config.cors.allowed_origins, prod.stack.resolve(prod.stack.consoleSite!.origin)],
    }),
  });
  const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage') as [[string, Resource]];
  const accessLog = stage.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };
  assert.ok(getAttOf(accessLog.DestinationArn));
  assert.match(accessLog.Format, /\$context\.requestId/);
  assert.doesNotMatch(accessLog.Format, /authorization|header/i);
  assert.deepEqual(stage.Properties.DefaultRouteSettings, {
    ThrottlingBurstLimit: prod.deployment.aws.api_burst_limit,
    ThrottlingRateLimit: prod.deployment.aws.api_rate_limit,
  });
  assert.equal(stage.Properties.StageName, '$default');
  assert.equal(stage.Properties.AutoDeploy, true);
});

test('HTTP API: the sign-in routes are throttled per route below the default; the stage waits for them', () => {
  const signinKeys = mountedRows
    .filter(([id]) => SIGNIN_ROUTES.includes(id))
    .map(([, route]) => `${route.method} ${route.path}`)
    .sort();
  assert.deepEqual(signinKeys, ['POST /v1/auth/cli/token', 'POST /v1/auth/login']);
  const { aws } = prod.deployment;
  assert.ok(aws.signin_rate_limit < aws.api_rate_limit && aws.signin_burst_limit < aws.api_burst_limit);
  const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage') as [[string, Resource]];
  assert.deepEqual(
    stage.Properties.RouteSettings,
    Object.fromEntries(
      signinKeys.map((key) => [
        key,
        { ThrottlingRateLimit: aws.signin_rate_limit, ThrottlingBurstLimit: aws.signin_burst_limit },
      ]),
    ),
  );
  // CloudFormation refuses route settings for a route that does not exist yet.
  const routeIds = ofType('AWS::ApiGatewayV2::Route')
    .filter(([, r]) => signinKeys.includes(r.Properties.RouteKey as string))
    .map(([id]) => id);
  assert.equal(routeIds.length, signinKeys.length);
  for (const id of routeIds) assert.ok(stage.DependsOn?.includes(id), `the stage depends on ${id}`);
  // From CDK context, like the API's own limits.
  const tuned = synth({ context: { signinRateLimit: 2, signinBurstLimit: 4 } });
  tuned.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
    RouteSettings: Match.objectLike({
      'POST /v1/auth/login': { ThrottlingRateLimit: 2, ThrottlingBurstLimit: 4 },
    }),
  });
});

test('IAM: Data API on the cluster, GetSecretValue on the secrets each function needs, nothing on *', () => {
  const policies = ofType('AWS::IAM::Policy');
  const secrets = new Map(ofType('AWS::SecretsManager::Secret'));
  const attachments = ofType('AWS::SecretsManager::SecretTargetAttachment').map(([id]) => id);
  for (const [policyId, policy] of policies) {
    const statements = (policy.Properties.PolicyDocument as { Statement: Json[] }).Statement;
    for (const statement of statements) {
      const actions = [statement.Action].flat() as string[];
      const resourcesOf = [statement.Resource].flat();
      assert.ok(!resourcesOf.includes('*'), `${policyId} grants ${actions.join(',')} on *`);
      for (const action of actions) assert.ok(!action.endsWith(':*'), `${policyId}: ${action}`);
      if (actions.some((a) => a.startsWith('rds-data:'))) {
        assert.deepEqual([...actions].sort(), [...DATA_API_ACTIONS].sort());
        assert.match(JSON.stringify(statement.Resource), /:cluster:/);
      }
      if (actions.some((a) => a.startsWith('secretsmanager:'))) {
        assert.deepEqual(actions, ['secretsmanager:GetSecretValue'], policyId);
        for (const resource of resourcesOf) {
          const id = refOf(resource);
          // The one prefix grant: the export destinations' secrets, which operators add after the deploy.
          const exportSecrets =
            policyId.startsWith('ExportsDeliverExportSecretsPolicy') &&
            JSON.stringify(resource).endsWith(`:secret:${config.exports.secret_prefix}*"]]}`);
          assert.ok(
            (id !== undefined && (secrets.has(id) || attachments.includes(id))) || exportSecrets,
            `${policyId}: ${JSON.stringify(resource)}`,
          );
        }
      }
    }
  }
  // Per function: its own role; with the builtin environment provider nobody reads an environment-service token.
  assert.equal(config.envsvc.provider, 'builtin');
  assert.ok(!('EnvServiceTokenSecretArn' in (prod.template.toJSON().Outputs as Json)));
  assert.ok(
    ofType('AWS::SecretsManager::Secret').every(
      ([, secret]) => !String(secret.Properties.Description).includes('environment service'),
    ),
    'no environment-service token with the builtin provider',
  );
  for (const planned of prod.stack.plan) {
    const { resource } = functionOf(planned.handler);
    const roleId = getAttOf(resource.Properties.Role)!;
    const variables = (resource.Properties.Environment as { Variables: Json }).Variables;
    assert.ok(!(ENV.envServiceTokenArn in variables), planned.handler);
    const others = serviceFunctions.filter(([, r]) => getAttOf(r.Properties.Role) === roleId);
    assert.equal(others.length, 1, `${planned.handler} shares its role`);
    const managed = (resources[roleId]!.Properties.ManagedPolicyArns as unknown[] | undefined) ?? [];
    assert.equal(managed.length, 0, `${planned.handler}: no managed policies`);
  }
});

test('migrations run on deploy, after the cluster and its writer, before the functions', () => {
  const [[triggerId, trigger]] = ofType('Custom::Trigger') as [[string, Resource]];
  const dependsOn = new Set(trigger.DependsOn ?? []);
  for (const [id] of [...ofType('AWS::RDS::DBCluster'), ...ofType('AWS::RDS::DBInstance')]) {
    assert.ok(dependsOn.has(id), `trigger waits for ${id}`);
  }
  const migrate = prod.stack.getLogicalId(
    prod.stack.migrateFunction.node.defaultChild as import('aws-cdk-lib').CfnElement,
  );
  const versionId = refOf(trigger.Properties.HandlerArn)!;
  assert.equal(resources[versionId]?.Type, 'AWS::Lambda::Version');
  assert.equal(refOf(resources[versionId]!.Properties.FunctionName), migrate);
  for (const [id, fn] of serviceFunctions) assert.ok((fn.DependsOn ?? []).includes(triggerId), id);
  // With local auth it creates the first admin, its password read from a generated secret by ARN.
  const variables = (resources[migrate]!.Properties.Environment as { Variables: Json }).Variables;
  assert.equal(config.auth.provider, 'local');
  assert.equal(variables.SVC_ADMIN_EMAIL, config.bootstrap.admin_email || 'admin@localhost');
  assert.ok(refOf(variables.SVC_ADMIN_PASSWORD_ARN));
  assert.equal(variables.SVC_ADMIN_PASSWORD, undefined);
});

test('alarms: 5xx rate, throttles, events p99 (when the route exists), dead letters, probe failures', () => {
  const alarms = ofType('AWS::CloudWatch::Alarm').map(([id, a]) => ({
    id,
    description: String(a.Properties.AlarmDescription),
  }));
  const has = (pattern: RegExp) => alarms.some((a) => pattern.test(a.description));
  assert.ok(has(/5xx/));
  assert.ok(has(/throttled/));
  assert.ok(has(/health probe failed/));
  const eventsRow = routeList.some(
    ([, route]) => route.method === EVENTS_ROUTE.method && route.path === EVENTS_ROUTE.path,
  );
  assert.equal(has(/POST \/v1\/devices\/events/), eventsRow);
  const queues = ofType('AWS::SQS::Queue').length;
  assert.equal(alarms.filter((a) => /dead-letter queue/.test(a.description)).length, queues);
  for (const [, alarm] of ofType('AWS::CloudWatch::Alarm')) {
    assert.equal((alarm.Properties.AlarmActions as unknown[]).length, 1);
  }
  prod.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
});

test('outputs: the API URL and the settings the dashboard needs', () => {
  const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  for (const name of [
    'ApiUrl',
    'AuthProvider',
    'CloudWatchDashboardUrl',
    'JwtSecretArn',
    'DatabaseClusterArn',
  ]) {
    assert.ok(outputs[name], name);
  }
  assert.equal(outputs.AuthProvider!.Value, config.auth.provider);
  assert.equal(outputs.CorsAllowedOrigins!.Value, config.cors.allowed_origins.join(','));
  assert.equal(
    prod.deployment.config.dashboard_url,
    undefined,
    'config/prod.toml leaves dashboard_url to the console',
  );
  assert.deepEqual(outputs.DashboardUrl!.Value, prod.stack.resolve(prod.stack.consoleSite!.dashboardUrl));
  assert.ok(outputs.ConsoleUrl);
});

test('cdk-nag AwsSolutions: no finding left, every acknowledgement has its reason', () => {
  for (const synthesized of [prod, synth({ configFile: 'config/local.toml' })]) {
    const report = nagReport(synthesized.app, synthesized.stack);
    assert.deepEqual(
      report.findings.map(
        (v) => `${v.ruleName}: ${v.violatingConstructs?.map((c) => c.constructPath).join(', ')}`,
      ),
      [],
    );
    assert.equal(report.success, true);
  }
  const reasons: string[] = [];
  const visit = (node: IConstruct) => {
    for (const entry of node.node.metadata) {
      if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        reasons.push(...Object.values(entry.data as Json).map(String));
    }
    for (const child of node.node.children) visit(child);
  };
  visit(prod.stack);
  assert.ok(reasons.length > 0);
  for (const reason of reasons)
    assert.ok(reason.length >= 40, `acknowledgement without a real reason: "${reason}"`);
});

test('Security Lake: with [aws] security_lake_bucket the deliver function may put objects under its prefix only, cdk-nag clean', () => {
  const lakeGrants = (synthesized: Synthesized) =>
    Object.entries(synthesized.template.toJSON().Resources as Record<string, Resource>).filter(
      ([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('ExportsDeliverExportSecurityLakePolicy'),
    );
  assert.deepEqual(lakeGrants(prod), [], 'no bucket, no grant');
  const bucket = 'aws-security-data-lake-eu-west-1-abcdefghijklmnopqrstuvwxyz1234';
  const lake = synth({ context: { securityLakeBucket: bucket } });
  const grants = lakeGrants(lake);
  assert.equal(grants.length, 1);
  const statements = (grants[0]![1].Properties.PolicyDocument as { Statement: Json[] }).Statement;
  assert.deepEqual(
    statements.map((st) => [st.Action, JSON.stringify(st.Resource)]),
    [
      [
        's3:PutObject',
        JSON.stringify({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::${bucket}/ext/*`]] }),
      ],
    ],
  );
  assert.deepEqual(
    nagReport(lake.app, lake.stack).findings.map((v) => v.ruleName),
    [],
  );
  const other = synth({
    context: { securityLakeBucket: bucket, securityLakePrefix: 'ext/acp_api_activity/' },
  });
  assert.match(JSON.stringify(lakeGrants(other)), /ext\/acp_api_activity\/\*/);
  assert.throws(() => synth({ context: { securityLakeBucket: 'Not_A_Bucket' } }), /security_lake_bucket/);
  assert.throws(
    () => synth({ context: { securityLakeBucket: bucket, securityLakePrefix: 'ext/*' } }),
    /security_lake_prefix/,
  );
});

test('sam local: the env-vars file points the functions at a local PostgreSQL and sets only declared variables', () => {
  const samLocal = synth({ samLocal: true });
  const envFile = JSON.parse(readFileSync(join(PROJECT_ROOT, 'infra/sam-local.env.json'), 'utf8')) as {
    Parameters: Record<string, string>;
  };
  assert.match(envFile.Parameters.SVC_DB_DSN!, /^postgres:\/\/[^@]+@host\.docker\.internal:5432\/\w+$/);
  const declared = new Map<string, number>();
  for (const resource of Object.values(samLocal.template.toJSON().Resources as Record<string, Resource>)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = (resource.Properties.Environment as { Variables?: Json } | undefined)?.Variables ?? {};
    for (const name of Object.keys(variables)) declared.set(name, (declared.get(name) ?? 0) + 1);
  }
  // sam local passes a variable only when the template declares it: each one the file sets is declared somewhere,
  // and the direct secret values replace the ARNs (set empty, so that no function calls Secrets Manager).
  for (const name of Object.keys(envFile.Parameters)) {
    if (name === 'SVC_ENVSVC_TOKEN' || name === 'SVC_ENVSVC_TOKEN_ARN') continue; // only with envsvc.provider = "http"
    assert.ok(declared.has(name), `${name} is set by the env-vars file but declared by no function`);
  }
  assert.equal(declared.get('SVC_JWT_SECRET'), samLocal.stack.plan.length);
  for (const name of Object.keys(envFile.Parameters).filter((n) => n.endsWith('_ARN'))) {
    assert.equal(envFile.Parameters[name], '', name);
  }
  // A deployment's template declares none of them.
  assert.ok(!prod.templateText.includes('"SVC_JWT_SECRET"'));
});

test('the event archive: a private, encrypted, TLS-only bucket with lifecycle, written by the archive function alone', () => {
  assert.equal(config.events.archive.target, 's3', 'config/prod.toml archives to S3');
  // The stack's other bucket is the console's (test/infra/console-site.test.ts).
  const [bucketEntry, ...others] = ofType('AWS::S3::Bucket').filter(([id]) => id.startsWith('EventArchive'));
  assert.ok(bucketEntry, 'the bucket');
  assert.deepEqual(others, [], 'one archive bucket');
  const [bucketId, bucket] = bucketEntry;
  const props = bucket.Properties;
  assert.deepEqual(props.PublicAccessBlockConfiguration, {
    BlockPublicAcls: true,
    BlockPublicPolicy: true,
    IgnorePublicAcls: true,
    RestrictPublicBuckets: true,
  });
  assert.equal(
    (
      (props.BucketEncryption as { ServerSideEncryptionConfiguration: Json[] })
        .ServerSideEncryptionConfiguration[0]!.ServerSideEncryptionByDefault as Json
    ).SSEAlgorithm,
    'AES256',
  );
  assert.equal(props.VersioningConfiguration, undefined, 'no versions: an hour is rewritten on purpose');
  const [rule] = (props.LifecycleConfiguration as { Rules: Json[] }).Rules;
  assert.deepEqual(
    (rule!.Transitions as Json[]).map((t) => [t.StorageClass, t.TransitionInDays]),
    [
      ['INTELLIGENT_TIERING', ARCHIVE_TIERING_DAYS.intelligentTiering],
      ['GLACIER_IR', ARCHIVE_TIERING_DAYS.glacierInstantRetrieval],
    ],
  );
  assert.equal(bucket.DeletionPolicy, 'Retain', 'prod keeps the archive');
  // enforceSSL: a bucket policy that denies any request without TLS.
  const [, bucketPolicy] = ofType('AWS::S3::BucketPolicy').find(
    ([, p]) => refOf(p.Properties.Bucket) === bucketId,
  )!;
  assert.ok(
    (bucketPolicy.Properties.PolicyDocument as { Statement: Json[] }).Statement.some(
      (s) =>
        s.Effect === 'Deny' &&
        JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
    ),
  );

  // Only the archive function reaches it: put and get under the prefix, and it is told the bucket's name.
  const writers = ofType('AWS::IAM::Policy').filter(([, p]) =>
    JSON.stringify(p.Properties).includes(bucketId),
  );
  assert.equal(writers.length, 1);
  const [statement] = (writers[0]![1].Properties.PolicyDocument as { Statement: Json[] }).Statement;
  assert.deepEqual([statement!.Action].flat().sort(), ['s3:GetObject', 's3:PutObject']);
  assert.match(JSON.stringify(statement!.Resource), /\/archive\/events\/\*/);
  const archive = functionOf(ARCHIVE_HANDLER);
  assert.deepEqual((writers[0]![1].Properties.Roles as unknown[]).map(refOf), [
    getAttOf(archive.resource.Properties.Role),
  ]);
  const variables = (archive.resource.Properties.Environment as { Variables: Json }).Variables;
  assert.equal(refOf(variables.SVC_ARCHIVE_BUCKET), bucketId);
  // The event list, the filters and the session view are told the bucket's name (their archive_location), nothing more.
  assert.deepEqual([...ARCHIVE_READERS].sort(), [
    'observability/events-list',
    'observability/filters',
    'observability/sessions-get',
  ]);
  for (const planned of prod.stack.plan.filter((p) => p.handler !== ARCHIVE_HANDLER)) {
    const fn = functionOf(planned.handler).resource;
    const other = (fn.Properties.Environment as { Variables: Json }).Variables;
    const reader = (ARCHIVE_READERS as readonly string[]).includes(planned.handler);
    if (reader) assert.equal(refOf(other.SVC_ARCHIVE_BUCKET), bucketId, planned.handler);
    else assert.ok(!('SVC_ARCHIVE_BUCKET' in other), planned.handler);
  }
  assert.equal(
    prod.stack.plan.filter((p) => (ARCHIVE_READERS as readonly string[]).includes(p.handler)).length,
    ARCHIVE_READERS.length,
  );
  assert.ok(
    prod.stack.plan.some((p) => p.handler === ARCHIVE_HANDLER && p.schedules[0]?.id === 'eventArchive'),
  );
});

test('the audit anchors: a bucket with Object Lock in compliance mode for the retention set, and a KMS signing key', () => {
  assert.equal(config.audit.anchors.target, 's3', 'config/prod.toml anchors to S3');
  const buckets = ofType('AWS::S3::Bucket').filter(([id]) => id.startsWith('AuditAnchor'));
  assert.equal(buckets.length, 1, 'one anchor bucket');
  const [bucketId, bucket] = buckets[0]!;
  const props = bucket.Properties;
  assert.equal(props.ObjectLockEnabled, true);
  assert.deepEqual(props.ObjectLockConfiguration, {
    ObjectLockEnabled: 'Enabled',
    Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: config.audit.anchors.retention_days } },
  });
  assert.deepEqual(props.VersioningConfiguration, { Status: 'Enabled' });
  assert.deepEqual(props.PublicAccessBlockConfiguration, {
    BlockPublicAcls: true,
    BlockPublicPolicy: true,
    IgnorePublicAcls: true,
    RestrictPublicBuckets: true,
  });
  assert.equal(bucket.DeletionPolicy, 'Retain', 'prod keeps the anchors');
  const keys = ofType('AWS::KMS::Key').filter(([id]) => id.startsWith('AuditAnchorKey'));
  assert.equal(keys.length, 1, 'one signing key');
  const [keyId, key] = keys[0]!;
  assert.equal(key.Properties.KeySpec, 'ECC_NIST_P256');
  assert.equal(key.Properties.KeyUsage, 'SIGN_VERIFY');
  // The anchor function signs and writes; verify reads; no other function is told the bucket or the key.
  for (const planned of prod.stack.plan) {
    const variables = (functionOf(planned.handler).resource.Properties.Environment as { Variables: Json })
      .Variables;
    const text = JSON.stringify(variables);
    assert.equal(
      text.includes('SVC_AUDIT_ANCHOR_BUCKET'),
      planned.handler === 'audit/anchor' || planned.handler === 'audit/verify',
      planned.handler,
    );
    assert.equal(
      text.includes('SVC_AUDIT_ANCHOR_KMS_KEY'),
      planned.handler === 'audit/anchor',
      planned.handler,
    );
  }
  const signers = ofType('AWS::IAM::Policy').filter(([, p]) =>
    JSON.stringify(p.Properties).includes('kms:Sign'),
  );
  assert.equal(signers.length, 1, 'one role signs');
  assert.ok(
    JSON.stringify(signers[0]![1].Properties).includes(keyId) ||
      JSON.stringify(signers[0]![1].Properties).includes('AuditAnchorKey'),
  );
  assert.ok(bucketId);
});

test('the event archive: a Glue table over the Parquet with partition projection, so Athena needs no crawler', () => {
  const [[, database]] = ofType('AWS::Glue::Database') as [[string, Resource]];
  const databaseName = (database.Properties.DatabaseInput as Json).Name;
  const [[, table]] = ofType('AWS::Glue::Table') as [[string, Resource]];
  assert.equal(table.Properties.DatabaseName, databaseName);
  const input = table.Properties.TableInput as Json;
  assert.equal(input.Name, ARCHIVE_TABLE);
  assert.equal(input.TableType, 'EXTERNAL_TABLE');
  const parameters = input.Parameters as Record<string, string>;
  assert.equal(parameters['projection.enabled'], 'true');
  assert.equal(parameters['projection.dt.type'], 'date');
  assert.equal(parameters['projection.dt.format'], 'yyyy-MM-dd');
  // From the first day an event may have: ingest refuses any before it, whatever events.retention says.
  assert.equal(parameters['projection.dt.range'], '2025-01-01,NOW');
  const decade = oldestAcceptedEventTime({ events: { retention: 3650 * 86_400_000 } as Config['events'] });
  assert.equal(decade.toISOString(), '2025-01-01T00:00:00.000Z');
  assert.equal(parameters['projection.hour.type'], 'integer');
  assert.equal(parameters['projection.hour.range'], '0,23');
  assert.equal(parameters['projection.hour.digits'], '2');
  assert.match(
    JSON.stringify(parameters['storage.location.template']),
    /\/archive\/events\/dt=\$\{dt\}\/hour=\$\{hour\}\//,
  );
  assert.deepEqual(
    (input.PartitionKeys as Json[]).map((k) => [k.Name, k.Type]),
    [
      ['dt', 'string'],
      ['hour', 'int'],
    ],
  );
  const descriptor = input.StorageDescriptor as Json;
  assert.deepEqual(
    (descriptor.Columns as Json[]).map((c) => [c.Name, c.Type]),
    ARCHIVE_COLUMNS.map((c) => [c.name, GLUE_TYPES[c.kind]]),
    'the columns the Parquet files have',
  );
  assert.equal(
    (descriptor.SerdeInfo as Json).SerializationLibrary,
    'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
  );
  const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  assert.match(String(refOf(outputs.EventArchiveBucketName?.Value)), /^EventArchiveBucket/);
  assert.equal(outputs.EventArchiveGlueDatabase?.Value, databaseName);
  assert.equal(outputs.EventArchiveGlueTable?.Value, ARCHIVE_TABLE);
});

test('without an archive (events.archive.target = "none"): no bucket, no Glue table, no archive function', () => {
  const file = join(scratch, 'no-archive.toml');
  writeFileSync(
    file,
    readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8').replace(
      /^target = "s3"$/m,
      'target = "none"',
    ),
  );
  const none = synth({ configFile: file });
  const types = Object.values(none.template.toJSON().Resources as Record<string, Resource>).map(
    (r) => r.Type,
  );
  assert.ok(!Object.keys(none.template.toJSON().Resources).some((id) => id.startsWith('EventArchive')));
  assert.ok(!types.includes('AWS::Glue::Table'));
  assert.ok(!none.stack.plan.some((p) => p.handler === ARCHIVE_HANDLER));
});
