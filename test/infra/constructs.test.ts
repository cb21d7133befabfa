// Each part of the stack (infra/constructs/*.ts) synthesized alone, in a bare stack with cdk.json's feature flags:
// what it creates, what it exposes to the others, and (for the parts that carry their own cdk-nag decisions) no
// AwsSolutions finding left. test/infra/stack.test.ts checks them put together.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, type CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { addApiRoutes, ServiceHttpApi } from '../../infra/constructs/http-api.ts';
import { MigrationsOnDeploy } from '../../infra/constructs/migrations.ts';
import { DATA_API_ACTIONS, NetworkAndDatabase } from '../../infra/constructs/network-and-database.ts';
import { Schedules } from '../../infra/constructs/schedules.ts';
import { AppSecrets } from '../../infra/constructs/secrets.ts';
import { stagingDirOf } from '../../infra/constructs/service-function.ts';
import { constructIdFor, featureOf, type PlannedFunction, SIZING } from '../../infra/plan.ts';
import { nagReport } from './nag.ts';
import { cdkJsonContext, PROJECT_ROOT } from './synth.ts';

type Json = Record<string, unknown>;

/** A stack of its own, with the app's feature flags and no bundling. */
const bareStack = () =>
  new Stack(new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } }), 'Bare');

const resourcesOf = (template: Template, type: string) =>
  Object.entries(template.findResources(type)) as Array<[string, { Properties: Json; DependsOn?: string[] }]>;

const nagFindings = (stack: Stack) => {
  Template.fromStack(stack);
  return nagReport(stack.node.root, stack).findings.map((v) => v.ruleName);
};

const databaseProps = (production: boolean) => ({
  databaseName: 'probe',
  maxCapacity: 2,
  autoPause: Duration.minutes(10),
  backupRetention: Duration.days(7),
  statementTimeoutMs: 20_000,
  logRetention: logs.RetentionDays.ONE_MONTH,
  production,
});

/** A planned function as infra/plan.ts makes them, for the parts that take the plan. */
const planned = (handler: string, more: Partial<PlannedFunction> = {}): PlannedFunction => ({
  handler,
  entry: `${PROJECT_ROOT}functions/${handler}.ts`,
  feature: featureOf(handler),
  constructId: constructIdFor(handler),
  kind: 'read',
  sizing: SIZING.read,
  routes: [],
  schedules: [],
  defaultRoute: false,
  usesEnvironmentService: false,
  serviceTokens: [],
  ...more,
});

/** Stand-ins for the service's functions: the API and the schedules only need something to invoke. */
const inlineFunctions = (stack: Stack, plan: PlannedFunction[]) => {
  const functions = new Map<string, lambda.IFunction>();
  for (const { handler, constructId } of plan) {
    functions.set(
      handler,
      new lambda.Function(stack, constructId, {
        runtime: lambda.Runtime.NODEJS_24_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler = async () => ({});'),
      }),
    );
  }
  return (handler: string) => functions.get(handler)!;
};

test('NetworkAndDatabase alone: VPC, cluster and credentials at the stack IDs, the DSN, the Data API grant', () => {
  for (const production of [true, false]) {
    const stack = bareStack();
    const database = new NetworkAndDatabase(stack, 'NetworkAndDatabase', databaseProps(production));
    const caller = new iam.Role(stack, 'Caller', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    database.grantDataApi(caller);
    const template = Template.fromStack(stack);

    // Beside the part, not under it: the same logical ID as in the deployed stack.
    assert.equal(stack.getLogicalId(database.cluster.node.defaultChild as CfnElement), 'DatabaseB269D8BB');
    assert.equal(stack.getLogicalId(database.vpc.node.defaultChild as CfnElement), 'Vpc8378EB38');
    template.resourceCountIs('AWS::RDS::DBCluster', 1);
    template.resourceCountIs('AWS::EC2::NatGateway', 0);
    template.resourceCountIs('AWS::EC2::InternetGateway', 0);
    const [[, cluster]] = resourcesOf(template, 'AWS::RDS::DBCluster') as [[string, { Properties: Json }]];
    assert.deepEqual(cluster.Properties.ServerlessV2ScalingConfiguration, {
      MinCapacity: 0,
      MaxCapacity: 2,
      SecondsUntilAutoPause: 600,
    });
    assert.equal(cluster.Properties.EnableHttpEndpoint, true);
    assert.equal(cluster.Properties.DatabaseName, 'probe');
    assert.equal(cluster.Properties.DeletionProtection, production);
    template.hasResourceProperties('AWS::RDS::DBClusterParameterGroup', {
      Parameters: { statement_timeout: '20000', timezone: 'UTC' },
    });

    const dsn = (stack.resolve(database.dsn) as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    assert.equal(dsn[0], 'data-api://probe?resourceArn=arn:');
    // The service connects as <database>_service, with a secret of its own; the owner's is Migrate's alone.
    const serviceSecret = stack.resolve(database.serviceSecret.secretArn) as { Ref: string };
    assert.match(serviceSecret.Ref, /^ServiceDatabaseSecretAttachment/);
    assert.deepEqual(dsn.slice(-4), [':cluster:', { Ref: 'DatabaseB269D8BB' }, '&secretArn=', serviceSecret]);
    const ownerDsn = (stack.resolve(database.ownerDsn) as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    assert.deepEqual(ownerDsn.slice(-1), [{ Ref: 'DatabaseSecretAttachmentE5D1B020' }]);
    assert.deepEqual(stack.resolve(database.secret.secretArn), { Ref: 'DatabaseSecretAttachmentE5D1B020' });
    const [, service] = resourcesOf(template, 'AWS::SecretsManager::Secret').find(
      ([id]) => id.startsWith('ServiceDatabaseSecret') && !id.includes('Attachment'),
    )!;
    assert.match(JSON.stringify(service.Properties.GenerateSecretString), /probe_service/);

    const callerId = stack.getLogicalId(caller.node.defaultChild as CfnElement);
    const [, policy] = resourcesOf(template, 'AWS::IAM::Policy').find(([, p]) =>
      (p.Properties.Roles as unknown[]).some((r) => (r as { Ref?: string }).Ref === callerId),
    )!;
    const statements = (policy.Properties.PolicyDocument as { Statement: Json[] }).Statement;
    assert.deepEqual(
      statements.map((s) => s.Action),
      [[...DATA_API_ACTIONS], 'secretsmanager:GetSecretValue'],
    );
    assert.deepEqual(statements[1]!.Resource, serviceSecret);
    assert.deepEqual(nagFindings(stack), [], `production: ${production}`);
  }
});

test('AppSecrets alone: generated secrets by config, at the stack IDs, kept, cdk-nag clean', () => {
  const stack = bareStack();
  const secrets = new AppSecrets(stack, 'AppSecrets', {
    environmentServiceToken: true,
    initialAdminPassword: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const template = Template.fromStack(stack);
  const ids = (list: Array<{ node: { defaultChild?: unknown } }>) =>
    list.map((secret) => stack.getLogicalId(secret.node.defaultChild as CfnElement));
  assert.deepEqual(ids(secrets.all), [
    'JwtSecretB8834B39',
    'AuditIngestToken72812621',
    'EnvServiceToken8C210196',
    'InitialAdminPasswordF2EA60EA',
  ]);
  const all = template.findResources('AWS::SecretsManager::Secret');
  assert.equal(Object.keys(all).length, 4);
  for (const [id, secret] of Object.entries(all)) {
    assert.ok(secret.Properties.GenerateSecretString.PasswordLength >= 32, id);
    assert.equal(secret.Properties.SecretString, undefined, id);
    assert.equal(secret.DeletionPolicy, 'Retain', id);
  }
  assert.deepEqual(nagFindings(stack), []);

  // The builtin environment provider and IdP auth: neither the token nor the first admin's password.
  const fewer = new AppSecrets(bareStack(), 'AppSecrets', {
    environmentServiceToken: false,
    initialAdminPassword: false,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  assert.equal(fewer.envServiceToken, undefined);
  assert.equal(fewer.initialAdminPassword, undefined);
  assert.deepEqual(fewer.all, [fewer.jwtSecret, fewer.auditIngestToken]);
});

test('ServiceHttpApi and addApiRoutes alone: one route per row, $default to the fallback, throttling, CORS only with origins', () => {
  for (const origins of [[], ['https://dash.example.com']]) {
    const stack = bareStack();
    const plan = [
      planned('identity/login', { routes: [{ id: 'login', method: 'POST', path: '/v1/auth/login' }] }),
      planned('health/healthcheck', {
        routes: [
          { id: 'healthcheck', method: 'GET', path: '/v1/healthcheck' },
          { id: 'healthcheckAlias', method: 'GET', path: '/healthcheck' },
        ],
      }),
      planned('meta/not-found', { defaultRoute: true }),
    ];
    const http = new ServiceHttpApi(stack, 'HttpApi', {
      allowedOrigins: origins,
      throttle: { rateLimit: 100, burstLimit: 200 },
      signinThrottle: { rateLimit: 5, burstLimit: 10 },
      logRetention: logs.RetentionDays.ONE_MONTH,
      logRemovalPolicy: RemovalPolicy.DESTROY,
    });
    // In a feature's stack in the service; here a construct of its own, beside the API.
    const signin = addApiRoutes(
      new Construct(stack, 'Feature'),
      http.api,
      plan,
      inlineFunctions(stack, plan),
    );
    http.throttleSigninRoutes(signin);
    const template = Template.fromStack(stack);
    assert.equal(stack.getLogicalId(http.api.node.defaultChild as CfnElement), 'ApiF70053CD');

    const routes = resourcesOf(template, 'AWS::ApiGatewayV2::Route');
    assert.deepEqual(routes.map(([, r]) => r.Properties.RouteKey).sort(), [
      '$default',
      'GET /healthcheck',
      'GET /v1/healthcheck',
      'POST /v1/auth/login',
    ]);
    // One integration per function, shared by its rows.
    template.resourceCountIs('AWS::ApiGatewayV2::Integration', 3);

    const [[, stage]] = resourcesOf(template, 'AWS::ApiGatewayV2::Stage') as [
      [string, { Properties: Json; DependsOn?: string[] }],
    ];
    assert.equal(stage.Properties.StageName, '$default');
    assert.deepEqual(stage.Properties.DefaultRouteSettings, {
      ThrottlingBurstLimit: 200,
      ThrottlingRateLimit: 100,
    });
    assert.deepEqual(stage.Properties.RouteSettings, {
      'POST /v1/auth/login': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 },
    });
    const [loginRoute] = routes.find(([, r]) => r.Properties.RouteKey === 'POST /v1/auth/login')!;
    assert.ok(stage.DependsOn?.includes(loginRoute), 'the stage waits for the sign-in route');

    const [[, api]] = resourcesOf(template, 'AWS::ApiGatewayV2::Api') as [[string, { Properties: Json }]];
    const cors = api.Properties.CorsConfiguration as Json | undefined;
    assert.deepEqual(cors?.AllowOrigins, origins.length > 0 ? origins : undefined);
  }
});

test('Schedules alone: a rule per schedule row, a dead-letter queue per scheduled function, what monitoring needs', () => {
  const stack = bareStack();
  const plan = [
    planned('health/probe', { schedules: [{ id: 'healthProbe', everyMs: 30 * 60_000 }] }),
    planned('observability/fold', { schedules: [{ id: 'rollupFold', everyMs: 60_000 }] }),
    planned('health/healthcheck', {
      routes: [{ id: 'healthcheck', method: 'GET', path: '/v1/healthcheck' }],
    }),
  ];
  const functionOf = inlineFunctions(stack, plan);
  const schedules = new Schedules(stack, 'Schedules', { plan, functionOf });
  const template = Template.fromStack(stack);

  const rules = resourcesOf(template, 'AWS::Events::Rule');
  assert.deepEqual(rules.map(([id]) => id).sort(), [
    'HealthProbeScheduleB9079E33',
    'RollupFoldScheduleD1BE0ECD',
  ]);
  assert.deepEqual(rules.map(([, r]) => r.Properties.ScheduleExpression).sort(), [
    'rate(1 minute)',
    'rate(30 minutes)',
  ]);
  for (const [, rule] of rules) {
    const [target] = rule.Properties.Targets as Json[];
    assert.equal((target!.RetryPolicy as Json).MaximumRetryAttempts, 3);
    assert.ok((target!.DeadLetterConfig as Json).Arn);
  }
  template.resourceCountIs('AWS::SQS::Queue', 2);
  template.resourceCountIs('AWS::Lambda::EventInvokeConfig', 2);
  assert.deepEqual(
    schedules.deadLetterQueues.map(({ name }) => name),
    ['HealthProbe', 'ObservabilityFold'],
  );
  assert.deepEqual(
    schedules.runs.map(({ handler, fn, everyMs }) => [handler, fn === functionOf(handler), everyMs]),
    [
      ['health/probe', true, 30 * 60_000],
      ['observability/fold', true, 60_000],
    ],
  );
});

test('MigrationsOnDeploy with the database alone: Migrate runs after the cluster, and before what waits for it', () => {
  const stack = bareStack();
  const database = new NetworkAndDatabase(stack, 'NetworkAndDatabase', databaseProps(true));
  const secrets = new AppSecrets(stack, 'AppSecrets', {
    environmentServiceToken: false,
    initialAdminPassword: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const migrations = new MigrationsOnDeploy(stack, 'MigrationsOnDeploy', {
    defaults: {
      projectRoot: PROJECT_ROOT,
      stagingDir: stagingDirOf(stack),
      sourceMaps: false,
      samLocal: false,
      logRetention: logs.RetentionDays.ONE_MONTH,
      logRemovalPolicy: RemovalPolicy.RETAIN,
      database,
    },
    database,
    initialAdmin: { email: 'root@example.com', password: secrets.initialAdminPassword! },
  });
  const waiting = new iam.Role(stack, 'Waiting', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  migrations.runBefore(waiting);
  const template = Template.fromStack(stack);

  const migrate = stack.getLogicalId(migrations.fn.node.defaultChild as CfnElement);
  assert.equal(migrate.replace(/[0-9A-F]{8}$/, ''), 'Migrate');
  const [[triggerId, trigger]] = resourcesOf(template, 'Custom::Trigger') as [
    [string, { Properties: Json; DependsOn?: string[] }],
  ];
  assert.equal(triggerId, 'MigrateOnDeploy');
  for (const id of ['DatabaseB269D8BB', 'Databasewriter2462CC03'])
    assert.ok(trigger.DependsOn?.includes(id), id);
  const [, waitingRole] = resourcesOf(template, 'AWS::IAM::Role').find(([id]) =>
    id.startsWith('Waiting'),
  )! as [string, { DependsOn?: string[] }];
  assert.deepEqual(waitingRole.DependsOn, [triggerId]);

  const fn = template.findResources('AWS::Lambda::Function')[migrate]!;
  const variables = fn.Properties.Environment.Variables as Json;
  assert.deepEqual(Object.keys(variables).sort(), [
    'SVC_ADMIN_EMAIL',
    'SVC_ADMIN_PASSWORD_ARN',
    'SVC_DB_DSN',
    'SVC_DB_SERVICE_SECRET_ARN',
  ]);
  assert.equal(variables.SVC_ADMIN_EMAIL, 'root@example.com');
  assert.deepEqual(variables.SVC_ADMIN_PASSWORD_ARN, stack.resolve(secrets.initialAdminPassword!.secretArn));
  // Migrate runs as the owner (the master secret) and sets the service role's password from the service secret.
  assert.deepEqual(variables.SVC_DB_DSN, stack.resolve(database.ownerDsn));
  assert.deepEqual(variables.SVC_DB_SERVICE_SECRET_ARN, stack.resolve(database.serviceSecret.secretArn));
  const migrateRole = stack.resolve(migrations.fn.role!.roleArn) as { 'Fn::GetAtt': [string, string] };
  const readable = resourcesOf(template, 'AWS::IAM::Policy')
    .filter(([, p]) =>
      (p.Properties.Roles as Array<{ Ref?: string }>).some((r) => r.Ref === migrateRole['Fn::GetAtt'][0]),
    )
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Json[] }).Statement)
    .filter((st) => st.Action === 'secretsmanager:GetSecretValue')
    .flatMap((st) => [st.Resource].flat());
  for (const secret of [database.secret, database.serviceSecret])
    assert.ok(
      readable.some((r) => JSON.stringify(r) === JSON.stringify(stack.resolve(secret.secretArn))),
      JSON.stringify(readable),
    );
});
