// The control plane in AWS, built from the route table and the config: an HTTP API with one Lambda per distinct
// handler, Aurora PostgreSQL Serverless v2 reached through the Data API, secrets in Secrets Manager, EventBridge
// schedules, migrations on deploy, alarms and a dashboard.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import {
  Annotations,
  Aws,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Stage,
  Validations,
} from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import type { Construct, IConstruct } from 'constructs';
import { parse as parseToml } from 'smol-toml';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from '#shared/http/cors.ts';
import { lambdaBundling } from './bundling.ts';
import { Monitoring } from './monitoring.ts';
import { type PlannedFunction, planFunctions } from './plan.ts';
import { rateExpression } from './rate.ts';
import { writeRouteTableModule } from './route-tables.ts';
import { contentHash, type Deployment, LAMBDA_CONFIG_PATH } from './settings.ts';

/** The route whose p99 latency gets its own alarm, when the route table has it. */
export const EVENTS_ROUTE = { method: 'POST', path: '/v1/devices/events' } as const;

/**
 * The sign-in routes (by route-table id), throttled per route below the API's default (signinRateLimit /
 * signinBurstLimit): the first layer against password guessing, before the service's own lockouts
 * (shared/domain/signin-lockouts.ts).
 */
export const SIGNIN_ROUTES: readonly string[] = ['login', 'cliToken'];

/** What a function may do on the cluster through the Data API (nothing else: no rds-data:* wildcard). */
export const DATA_API_ACTIONS = [
  'rds-data:BatchExecuteStatement',
  'rds-data:BeginTransaction',
  'rds-data:CommitTransaction',
  'rds-data:ExecuteStatement',
  'rds-data:RollbackTransaction',
] as const;

/** Environment variable names the functions read (see shared/config/load.ts and the secrets hook). */
export const ENV = {
  config: 'SVC_CONFIG',
  dsn: 'SVC_DB_DSN',
  jwtSecretArn: 'SVC_JWT_SECRET_ARN',
  envServiceTokenArn: 'SVC_ENVSVC_TOKEN_ARN',
  auditIngestTokenArn: 'SVC_AUDIT_INGEST_TOKEN_ARN',
} as const;

export interface ControlPlaneStackProps extends StackProps {
  deployment: Deployment;
  /** The repository root: functions/, migrations/, package-lock.json. */
  projectRoot: string;
  /** Source maps in the bundles (default on; the bundle benchmark turns them off). */
  sourceMaps?: boolean;
  /**
   * Stack traces through the source maps (NODE_OPTIONS=--enable-source-maps). Off by default: Node then parses the
   * map at cold start (~20 ms for a 3.7 MB map), and the service logs error names and codes, not stacks. Turn it on
   * (`-c sourceMapsAtRuntime=true`) while chasing an uncaught error.
   */
  sourceMapsAtRuntime?: boolean;
  /** Also bundle the node-postgres driver, for `sam local` against a local PostgreSQL. */
  samLocal?: boolean;
}

export class ControlPlaneStack extends Stack {
  readonly api: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly cluster: rds.DatabaseCluster;
  readonly functions = new Map<string, NodejsFunction>();
  readonly plan: PlannedFunction[];
  readonly migrateFunction: NodejsFunction;

  constructor(scope: Construct, id: string, props: ControlPlaneStackProps) {
    super(scope, id, props);
    const { config, aws } = props.deployment;
    const isProd = config.env === 'prod';
    const retain = isProd ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logRetention = aws.log_retention_days as logs.RetentionDays;
    for (const warning of props.deployment.warnings) Annotations.of(this).addWarningV2('acp:config', warning);

    // The config every function reads at cold start: the TOML without secrets, as JSON (loadConfig reads a `.json`
    // file with JSON.parse, so the bundles carry no TOML parser), copied into each bundle. Staged inside the cloud
    // assembly (cdk.out), where the bundling hooks copy it from. Absolute: under the CDK CLI the outdir is relative
    // (`cdk.out`), and esbuild reads a relative entry path such as the route modules' as a package name.
    const stagingDir = resolve(Stage.of(this)?.outdir ?? tmpdir());
    const configDir = join(stagingDir, 'lambda-config');
    mkdirSync(configDir, { recursive: true });
    const lambdaConfigJson = `${JSON.stringify(parseToml(props.deployment.lambdaConfigToml), null, 2)}\n`;
    const lambdaConfigFile = join(configDir, `${contentHash(lambdaConfigJson)}.json`);
    writeFileSync(lambdaConfigFile, lambdaConfigJson);
    const copyConfig = (outputDir: string) =>
      `cp "${lambdaConfigFile}" "${outputDir}/${basename(LAMBDA_CONFIG_PATH)}"`;

    // ---- Network: isolated subnets for the database only; functions stay outside and use the Data API. ----
    const flowLogs = new logs.LogGroup(this, 'VpcFlowLogs', {
      retention: logRetention,
      removalPolicy: retain,
    });
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      restrictDefaultSecurityGroup: true,
      subnetConfiguration: [{ name: 'database', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 }],
      flowLogs: {
        rejected: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
          trafficType: ec2.FlowLogTrafficType.REJECT,
        },
      },
    });

    // ---- Aurora PostgreSQL Serverless v2 with the Data API. ----
    // 17.x: min capacity 0 with auto-pause and the Data API both need Aurora PostgreSQL ≥ 16.3 / 15.7 / 14.12 / 13.15.
    const engine = rds.DatabaseClusterEngine.auroraPostgres({
      version: rds.AuroraPostgresEngineVersion.VER_17_5,
    });
    const parameterGroup = new rds.ParameterGroup(this, 'DatabaseParameters', {
      engine,
      description: 'Control plane: statement timeout under API Gateway 30 s, UTC',
      parameters: {
        statement_timeout: String(config.db.statement_timeout),
        timezone: 'UTC',
      },
    });
    this.cluster = new rds.DatabaseCluster(this, 'Database', {
      engine,
      writer: rds.ClusterInstance.serverlessV2('writer', { autoMinorVersionUpgrade: true }),
      serverlessV2MinCapacity: 0,
      serverlessV2MaxCapacity: aws.db_max_acu,
      serverlessV2AutoPauseDuration: Duration.millis(aws.db_auto_pause),
      enableDataApi: true,
      vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      credentials: rds.Credentials.fromGeneratedSecret('controlplane_admin'),
      defaultDatabaseName: aws.database_name,
      parameterGroup,
      storageEncrypted: true,
      iamAuthentication: true,
      backup: { retention: Duration.millis(aws.db_backup_retention), preferredWindow: '03:00-04:00' },
      preferredMaintenanceWindow: 'sun:04:30-sun:05:30',
      deletionProtection: isProd,
      removalPolicy: isProd ? RemovalPolicy.RETAIN : RemovalPolicy.SNAPSHOT,
      copyTagsToSnapshot: true,
    });
    const cluster = this.cluster;
    const databaseSecret = cluster.secret!;
    const dsn = `data-api://${aws.database_name}?resourceArn=${cluster.clusterArn}&secretArn=${databaseSecret.secretArn}`;

    // ---- Secrets: generated here, read by the functions at cold start (ARN in the environment, never the value). ----
    const jwtSecret = new secretsmanager.Secret(this, 'JwtSecret', {
      description: 'HS256 signing secret of local auth and CLI sign-in tokens (auth.jwt_secret)',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: retain,
    });
    // Only with an external environment service (envsvc.provider = "http"): its bearer token, which that service
    // issues. Generated here as a placeholder, so that the secret exists before the first deploy; put the real token
    // with put-secret-value. With the builtin provider nothing calls an environment service and there is no token.
    const envServiceToken =
      config.envsvc.provider === 'http'
        ? new secretsmanager.Secret(this, 'EnvServiceToken', {
            description:
              'Bearer token for the external environment service (envsvc); put the token it issued with put-secret-value',
            generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
            removalPolicy: retain,
          })
        : undefined;

    // The log shipper's token for POST /v1/admin/audit-logs (audit.ingest_token): only the ingest function can read
    // it, and no other route accepts it, so the shipper needs no admin account. Hand its value to the shipper.
    const auditIngestToken = new secretsmanager.Secret(this, 'AuditIngestToken', {
      description:
        "The log shipper's bearer token for POST /v1/admin/audit-logs (audit.ingest_token); that route only",
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
      removalPolicy: retain,
    });

    const dataApiStatements = () => [
      new iam.PolicyStatement({ actions: [...DATA_API_ACTIONS], resources: [cluster.clusterArn] }),
      // The Data API fetches the database credentials with the caller's identity.
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [databaseSecret.secretArn],
      }),
    ];
    const functionRole = (roleId: string, description: string, logGroup: logs.LogGroup) => {
      const role = new iam.Role(this, roleId, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description,
      });
      logGroup.grantWrite(role);
      for (const statement of dataApiStatements()) role.addToPrincipalPolicy(statement);
      return role;
    };
    const bundling = (
      entry: string,
      afterBundling: (inputDir: string, outputDir: string) => string[],
      routeTableModule?: string,
    ) =>
      lambdaBundling({
        entry,
        stagingDir,
        sourceMap: props.sourceMaps ?? true,
        includePostgresDriver: props.samLocal ?? false,
        afterBundling,
        ...(routeTableModule ? { routeTableModule } : {}),
        // The providers this config does not pick are left out of the bundles (infra/bundling.ts).
        deployment: { authProvider: config.auth.provider, envProvider: config.envsvc.provider },
      });
    const common = {
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
    };

    // With local auth, the first admin's password (created by the migration function, once, if no such user exists).
    const initialAdminPassword =
      config.auth.provider === 'local'
        ? new secretsmanager.Secret(this, 'InitialAdminPassword', {
            description:
              'Password of the first admin (bootstrap.admin_email), set when the deploy-time migration creates it; ' +
              'change it after the first sign-in',
            generateSecretString: { passwordLength: 32, excludePunctuation: true, includeSpace: false },
            removalPolicy: retain,
          })
        : undefined;

    // ---- Migrations on deploy (before any function of this deployment serves traffic). ----
    const migrateEntry = join(props.projectRoot, 'infra/functions/migrate.ts');
    const migrateLogs = new logs.LogGroup(this, 'MigrateLogs', {
      retention: logRetention,
      removalPolicy: retain,
    });
    const migrateRole = functionRole(
      'MigrateRole',
      'Migrations on deploy: Data API on the cluster',
      migrateLogs,
    );
    this.migrateFunction = new NodejsFunction(this, 'Migrate', {
      ...common,
      entry: migrateEntry,
      description: 'Applies migrations/ through the Data API on deploy (CDK Trigger)',
      memorySize: 512,
      timeout: Duration.minutes(5),
      role: migrateRole,
      logGroup: migrateLogs,
      environment: {
        [ENV.dsn]: dsn,
        ...(initialAdminPassword
          ? {
              SVC_ADMIN_EMAIL: config.bootstrap.admin_email || 'admin@localhost',
              SVC_ADMIN_PASSWORD_ARN: initialAdminPassword.secretArn,
              // `sam local` only passes variables the template declares; its env-vars file gives the value.
              ...(props.samLocal ? { SVC_ADMIN_PASSWORD: '' } : {}),
            }
          : {}),
      },
      bundling: bundling(migrateEntry, (inputDir, outputDir) => [
        `mkdir -p "${outputDir}/migrations"`,
        `cp "${inputDir}"/migrations/*.sql "${outputDir}/migrations/"`,
      ]),
    });
    if (initialAdminPassword) {
      migrateRole.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [initialAdminPassword.secretArn],
        }),
      );
    }
    const migrations = new triggers.Trigger(this, 'MigrateOnDeploy', {
      handler: this.migrateFunction,
      // The writer instance is a child of the cluster construct, as are its secret and attachment.
      executeAfter: [cluster, migrateRole],
      timeout: Duration.minutes(6),
    });

    // ---- One function per distinct route-table handler (and per scheduled function). ----
    this.plan = planFunctions(config, props.projectRoot);
    for (const planned of this.plan) {
      const logGroup = new logs.LogGroup(this, `${planned.constructId}Logs`, {
        retention: logRetention,
        removalPolicy: retain,
      });
      const what = [
        ...planned.routes.map((route) => `${route.method} ${route.path}`),
        ...planned.schedules.map((schedule) => `schedule ${schedule.id}`),
      ].join(', ');
      const role = functionRole(
        `${planned.constructId}Role`,
        `${planned.handler}: ${what}`.slice(0, 1000),
        logGroup,
      );
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [jwtSecret.secretArn],
        }),
      );
      if (planned.usesEnvironmentService && envServiceToken) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: ['secretsmanager:GetSecretValue'],
            resources: [envServiceToken.secretArn],
          }),
        );
      }
      const readsIngestToken = planned.serviceTokens.includes('audit.ingest_token');
      if (readsIngestToken) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: ['secretsmanager:GetSecretValue'],
            resources: [auditIngestToken.secretArn],
          }),
        );
      }
      const fn = new NodejsFunction(this, planned.constructId, {
        ...common,
        entry: planned.entry,
        description: `${planned.handler} (${planned.kind}): ${what}`.slice(0, 256),
        memorySize: planned.sizing.memoryMb,
        timeout: Duration.seconds(planned.sizing.timeoutSeconds),
        role,
        logGroup,
        environment: {
          [ENV.config]: LAMBDA_CONFIG_PATH,
          [ENV.dsn]: dsn,
          [ENV.jwtSecretArn]: jwtSecret.secretArn,
          ...(planned.usesEnvironmentService && envServiceToken
            ? { [ENV.envServiceTokenArn]: envServiceToken.secretArn }
            : {}),
          ...(readsIngestToken ? { [ENV.auditIngestTokenArn]: auditIngestToken.secretArn } : {}),
          ...(props.sourceMapsAtRuntime ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
          // `sam local` only passes variables the template declares; its env-vars file gives the values.
          ...(props.samLocal ? { SVC_JWT_SECRET: '' } : {}),
          ...(props.samLocal && planned.usesEnvironmentService ? { SVC_ENVSVC_TOKEN: '' } : {}),
          ...(props.samLocal && readsIngestToken ? { SVC_AUDIT_INGEST_TOKEN: '' } : {}),
        },
        bundling: bundling(
          planned.entry,
          (_inputDir, outputDir) => [copyConfig(outputDir)],
          writeRouteTableModule(planned.handler, planned.entry, join(stagingDir, 'lambda-routes')),
        ),
      });
      // New code starts serving only once the schema it expects is in place.
      migrations.executeBefore(fn);
      this.functions.set(planned.handler, fn);
    }

    // ---- HTTP API: CORS answered by the gateway, access logs, default throttling, one route per mounted row. ----
    const origins = config.cors.allowed_origins;
    this.api = new apigwv2.HttpApi(this, 'Api', {
      description: 'Agent control plane (one Lambda per route-table handler)',
      createDefaultStage: false,
      ...(origins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: origins,
              allowMethods: [apigwv2.CorsHttpMethod.ANY],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }
        : {}),
    });
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: logRetention,
      removalPolicy: retain,
    });
    this.stage = new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: aws.api_rate_limit, burstLimit: aws.api_burst_limit },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // Request metadata only: no headers (they carry tokens), no bodies, no query strings.
        format: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            method: '$context.httpMethod',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationStatus: '$context.integration.status',
            integrationError: '$context.integrationErrorMessage',
            userAgent: '$context.identity.userAgent',
          }),
        ),
      },
    });
    const signinRoutes: Array<[string, apigwv2.HttpRoute[]]> = [];
    for (const planned of this.plan) {
      if (planned.defaultRoute) {
        // Whatever no route matches gets {error: 'not_found', message} from the service, not API Gateway's own body.
        new apigwv2.HttpRoute(this.api, 'DefaultRoute', {
          httpApi: this.api,
          routeKey: apigwv2.HttpRouteKey.DEFAULT,
          integration: new HttpLambdaIntegration(
            `${planned.constructId}Integration`,
            this.functions.get(planned.handler)!,
            { payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0 },
          ),
        });
      }
      if (planned.routes.length === 0) continue;
      // One integration per function, shared by its rows; each route still gets its own invoke permission.
      const integration = new HttpLambdaIntegration(
        `${planned.constructId}Integration`,
        this.functions.get(planned.handler)!,
        { payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0 },
      );
      for (const route of planned.routes) {
        const added = this.api.addRoutes({
          path: route.path,
          methods: [apigwv2.HttpMethod[route.method]],
          integration,
        });
        if (SIGNIN_ROUTES.includes(route.id)) signinRoutes.push([`${route.method} ${route.path}`, added]);
      }
    }
    // Per-route throttling of the sign-in routes, below the stage's default. The stage must be created after those
    // routes: CloudFormation refuses route settings for a route key that does not exist yet.
    const stageResource = this.stage.node.defaultChild as apigwv2.CfnStage;
    stageResource.routeSettings = Object.fromEntries(
      signinRoutes.map(([routeKey]) => [
        routeKey,
        { ThrottlingRateLimit: aws.signin_rate_limit, ThrottlingBurstLimit: aws.signin_burst_limit },
      ]),
    );
    for (const [, added] of signinRoutes) for (const route of added) this.stage.node.addDependency(route);
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authorization is enforced in every function by the route table auth kind (bearer JWTs and roles, device ' +
        'certificate signatures over the raw body, which no gateway authorizer can verify); public routes are public ' +
        'by the spec (health check, OpenAPI document, sign-in); the $default route only answers 404 not_found.',
    });

    // ---- Schedules: EventBridge rules with retries and a dead-letter queue per scheduled function. ----
    const deadLetterQueues: Array<{ name: string; queue: sqs.Queue }> = [];
    let probe: { fn: lambda.IFunction; everyMs: number } | undefined;
    for (const planned of this.plan) {
      if (planned.schedules.length === 0) continue;
      const fn = this.functions.get(planned.handler)!;
      const queue = new sqs.Queue(this, `${planned.constructId}DeadLetters`, {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      Validations.of(queue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself the dead-letter queue of a scheduled function.',
      });
      deadLetterQueues.push({ name: planned.constructId, queue });
      // Failures of the function itself (async invocation), after Lambda's own retries.
      fn.configureAsyncInvoke({
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
        onFailure: new destinations.SqsDestination(queue),
      });
      for (const schedule of planned.schedules) {
        new events.Rule(this, `${schedule.id[0]!.toUpperCase()}${schedule.id.slice(1)}Schedule`, {
          description: `${planned.handler} every ${schedule.everyMs / 60_000} min`,
          schedule: events.Schedule.expression(rateExpression(schedule.everyMs, `schedules.${schedule.id}`)),
          targets: [
            // Failures to deliver the event (throttling, permissions), after EventBridge's retries.
            new targets.LambdaFunction(fn, {
              event: events.RuleTargetInput.fromObject({ schedule: schedule.id }),
              retryAttempts: 3,
              maxEventAge: Duration.hours(1),
              deadLetterQueue: queue,
            }),
          ],
        });
        if (planned.handler === 'health/probe') probe = { fn, everyMs: schedule.everyMs };
      }
    }

    // ---- Alarms and dashboard. ----
    const eventsHandler = this.plan.find((planned) =>
      planned.routes.some(
        (route) => route.method === EVENTS_ROUTE.method && route.path === EVENTS_ROUTE.path,
      ),
    );
    const monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.stage,
      functions: this.plan.map((planned) => ({
        name: planned.constructId,
        fn: this.functions.get(planned.handler)!,
      })),
      ...(eventsHandler ? { eventsFunction: this.functions.get(eventsHandler.handler)! } : {}),
      eventsP99Ms: aws.events_p99_ms,
      ...(probe ? { probe } : {}),
      deadLetterQueues,
      ...(aws.alarm_email ? { alarmEmail: aws.alarm_email } : {}),
      removalPolicy: retain,
    });

    // ---- Outputs: what the dashboard (web app) and ops need. ----
    const output = (outputId: string, value: string, description: string) =>
      new CfnOutput(this, outputId, { value, description });
    output('ApiUrl', this.stage.url, 'Base URL of the API (the dashboard and device agents call it)');
    output('AuthProvider', config.auth.provider, 'auth.provider: local (users + HS256 JWT) or idp');
    if (config.auth.provider === 'idp') {
      output('IdpIssuer', `https://${config.auth.idp_domain}/`, 'Issuer the API accepts tokens from');
      output('IdpAudience', config.auth.idp_audience, 'Audience the API expects in IdP tokens');
    }
    if (config.dashboard_url)
      output('DashboardUrl', config.dashboard_url, 'dashboard_url (CLI sign-in broker)');
    if (origins.length > 0) output('CorsAllowedOrigins', origins.join(','), 'cors.allowed_origins');
    output(
      'CloudWatchDashboardUrl',
      `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${monitoring.dashboard.dashboardName}`,
      'Operations dashboard',
    );
    output(
      'AlarmTopicArn',
      monitoring.topic.topicArn,
      'SNS topic the alarms notify (subscribe on-call here)',
    );
    output('JwtSecretArn', jwtSecret.secretArn, 'Secrets Manager secret holding auth.jwt_secret');
    if (envServiceToken) {
      output(
        'EnvServiceTokenSecretArn',
        envServiceToken.secretArn,
        'Secret holding the environment service token (put-secret-value)',
      );
    }
    output(
      'AuditIngestTokenSecretArn',
      auditIngestToken.secretArn,
      "The log shipper's token for POST /v1/admin/audit-logs (get-secret-value)",
    );
    output('DatabaseClusterArn', cluster.clusterArn, 'Aurora cluster (Data API resourceArn)');
    output('DatabaseSecretArn', databaseSecret.secretArn, 'Database credentials (Data API secretArn)');
    output('DatabaseName', aws.database_name, 'Database name (Data API database)');
    if (initialAdminPassword) {
      output(
        'InitialAdminEmail',
        config.bootstrap.admin_email || 'admin@localhost',
        'The first admin (local auth)',
      );
      output(
        'InitialAdminPasswordSecretArn',
        initialAdminPassword.secretArn,
        'Its initial password (get-secret-value)',
      );
    }

    // cluster.secret is the attachment; the generated secret itself is the cluster's child "Secret".
    this.acknowledgeFindings(
      isProd,
      [
        jwtSecret,
        auditIngestToken,
        ...(envServiceToken ? [envServiceToken] : []),
        ...(initialAdminPassword ? [initialAdminPassword] : []),
      ],
      cluster.node.findChild('Secret'),
    );
  }

  /** cdk-nag findings that are decisions, each with its reason. */
  private acknowledgeFindings(
    isProd: boolean,
    appSecrets: secretsmanager.ISecret[],
    databaseSecret: IConstruct,
  ): void {
    for (const secret of appSecrets) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Application secret without a rotation Lambda: rotating the JWT secret signs every user out, the ' +
          'environment-service token is issued by that service, the initial admin password is used once and the ' +
          'audit ingest token is shared with the log shipper; they ' +
          'are rotated by runbook (put-secret-value, then a deploy or cold start picks the new value up).',
      });
    }
    Validations.of(databaseSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The database is reached only through the Data API, which reads this secret on every call, so rotation is ' +
        'transparent; a rotation Lambda would need the VPC plus a Secrets Manager interface endpoint (there is no ' +
        'NAT). Rotate by runbook until that cost is justified.',
    });
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-RDS11',
      reason:
        'The default port is not reachable from anywhere: isolated subnets, no ingress rule; clients use the Data ' +
        'API over HTTPS.',
    });
    if (!isProd) {
      Validations.of(this.cluster).acknowledge({
        id: 'AwsSolutions-RDS10',
        reason: 'Deletion protection is on when env = "prod"; non-production stacks must be removable.',
      });
    }
  }
}
