// The control plane in AWS, built from the route table and the config: an HTTP API with one Lambda per distinct
// handler (each feature's functions and routes in a nested stack of their own), Aurora PostgreSQL Serverless v2
// reached through the Data API, secrets in Secrets Manager, EventBridge schedules, migrations on deploy, alarms and a
// dashboard. Each of those is a part with one job (infra/constructs/*.ts, infra/monitoring.ts); this file puts them
// together, in the order they are created.
import {
  Annotations,
  Aws,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as rds from 'aws-cdk-lib/aws-rds';
import type { Construct } from 'constructs';
import { METRIC_NAMESPACE } from '#shared/core/metrics.ts';
import { EXPORT_LAG_METRIC } from '#shared/exports/streams.ts';
import { OLDEST_EVENT_DAY } from '#shared/observability/retention.ts';
import { routes } from '#shared/routes.ts';
import { AlertEvents } from './constructs/alert-events.ts';
import { AuditAnchors } from './constructs/audit-anchors.ts';
import { ConsoleSite } from './constructs/console-site.ts';
import { ARCHIVE_TABLE, EventArchive } from './constructs/event-archive.ts';
import { byFeature, FeatureStack } from './constructs/feature-stack.ts';
import { ServiceHttpApi } from './constructs/http-api.ts';
import { MigrationsOnDeploy } from './constructs/migrations.ts';
import { NetworkAndDatabase } from './constructs/network-and-database.ts';
import { Schedules } from './constructs/schedules.ts';
import { AppSecrets } from './constructs/secrets.ts';
import { type FunctionDefaults, stagingDirOf } from './constructs/service-function.ts';
import { Monitoring } from './monitoring.ts';
import { type PlannedFunction, planFunctions } from './plan.ts';
import type { Deployment } from './settings.ts';

/** The route whose p99 latency gets its own alarm, when the route table has it. */
export const EVENTS_ROUTE = { method: 'POST', path: '/v1/devices/events' } as const;

/** The scheduled function whose failures get their own alarm. */
const PROBE_HANDLER = 'health/probe';

/** The function that derives and delivers alerts (schedules.alerts). */
export const ALERTS_HANDLER = 'alerts/derive';

/** The function that writes the event archive (schedules.eventArchive). */
export const ARCHIVE_HANDLER = 'observability/archive';

/** The function that writes the audit anchors (schedules.auditAnchor), and the one that checks the chain with them. */
export const ANCHOR_HANDLER = 'audit/anchor';
/** Streams events to the export destinations; reads their secrets under exports.secret_prefix. */
export const EXPORT_HANDLER = 'exports/deliver';
export const ANCHOR_READERS = [routes.verifyAuditLogs.handler] as const;

/** The functions whose answers say where archived events are (archive_location): they are told the bucket too. */
export const ARCHIVE_READERS = [
  routes.obsListEvents.handler,
  routes.obsObservabilityFilters.handler,
  routes.obsGetSession.handler,
] as const;

/**
 * The archive's storage classes by age: S3 Intelligent-Tiering after 30 days (the recent months are the ones queried),
 * Glacier Instant Retrieval after 180 (still read in milliseconds, so Athena queries it; 90-day minimum storage).
 */
export const ARCHIVE_TIERING_DAYS = { intelligentTiering: 30, glacierInstantRetrieval: 180 } as const;

/** The first day Athena's partition projection offers: ingest refuses any event before it (shared/observability/retention.ts). */
export const ARCHIVE_FIRST_DAY = OLDEST_EVENT_DAY;

export interface ControlPlaneStackProps extends StackProps {
  deployment: Deployment;
  /** The repository root: functions/, migrations/, package-lock.json. */
  projectRoot: string;
  /** Source maps in the bundles (default on; the bundle benchmark turns them off). */
  sourceMaps?: boolean;
  /**
   * Stack traces through the source maps (NODE_OPTIONS=--enable-source-maps). Off by default: Node then parses the
   * map at cold start, and the service logs error names and codes, not stacks. Turn it on
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
  /** The function of each planned handler, by handler. */
  readonly functions: Map<string, NodejsFunction>;
  /** One nested stack per feature: its functions and routes. */
  readonly featureStacks: FeatureStack[];
  readonly plan: PlannedFunction[];
  readonly migrateFunction: NodejsFunction;
  /** The admin console (aws.console, on by default). */
  readonly consoleSite: ConsoleSite | undefined;
  /** dashboard_url as deployed: the config's, else the console's (a token), else none (no CLI sign-in). */
  readonly dashboardUrl: string | undefined;
  /** With audit.anchors.target = "s3": the Object Lock bucket of the anchors and their signing key. */
  readonly auditAnchors: AuditAnchors | undefined;
  /** With events.archive.target = "s3": the bucket and the Glue table Athena queries. */
  readonly archive: EventArchive | undefined;
  /** The alert event bus, its rule and log, and the webhook secret. */
  readonly alertEvents: AlertEvents | undefined;

  constructor(scope: Construct, id: string, props: ControlPlaneStackProps) {
    super(scope, id, props);
    const { config, aws } = props.deployment;
    const production = config.env === 'prod';
    const retain = production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logRetention = aws.log_retention_days as logs.RetentionDays;
    for (const warning of props.deployment.warnings) Annotations.of(this).addWarningV2('acp:config', warning);

    // Every part creates its resources in this stack, beside itself, with the ids they were deployed with: their
    // logical IDs stay those of the deployed stack (infra/constructs/flat-construct.ts says why).
    const database = new NetworkAndDatabase(this, 'NetworkAndDatabase', {
      databaseName: aws.database_name,
      maxCapacity: aws.db_max_acu,
      autoPause: Duration.millis(aws.db_auto_pause),
      backupRetention: Duration.millis(aws.db_backup_retention),
      statementTimeoutMs: config.db.statement_timeout,
      logRetention,
      production,
    });
    this.cluster = database.cluster;

    const secrets = new AppSecrets(this, 'AppSecrets', {
      environmentServiceToken: config.envsvc.provider === 'http',
      initialAdminPassword: config.auth.provider === 'local',
      removalPolicy: retain,
    });

    const functionDefaults: FunctionDefaults = {
      projectRoot: props.projectRoot,
      stagingDir: stagingDirOf(this),
      sourceMaps: props.sourceMaps ?? true,
      samLocal: props.samLocal ?? false,
      logRetention,
      logRemovalPolicy: retain,
      database,
    };
    const initialAdminEmail = config.bootstrap.admin_email || 'admin@localhost';
    const migrations = new MigrationsOnDeploy(this, 'MigrationsOnDeploy', {
      defaults: functionDefaults,
      database,
      ...(secrets.initialAdminPassword
        ? { initialAdmin: { email: initialAdminEmail, password: secrets.initialAdminPassword } }
        : {}),
    });
    this.migrateFunction = migrations.fn;

    // The admin console. Without a dashboard_url of the config's own, it is the dashboard: the agent's `login` then
    // works out of the box, and CLI sign-in (and so device enrollment) is deployed.
    this.consoleSite = aws.console
      ? new ConsoleSite(this, 'ConsoleSite', { stagingDir: stagingDirOf(this), logRetention, config })
      : undefined;
    const consoleIsDashboard = this.consoleSite !== undefined && !config.dashboard_url;
    this.dashboardUrl = config.dashboard_url ?? this.consoleSite?.dashboardUrl;

    this.plan = planFunctions({ ...config, dashboard_url: this.dashboardUrl }, props.projectRoot);
    const http = new ServiceHttpApi(this, 'HttpApi', {
      // The console is another origin than the API (docs/hosting.md): the gateway answers its preflight requests.
      allowedOrigins: [
        ...config.cors.allowed_origins,
        ...(this.consoleSite ? [this.consoleSite.origin] : []),
      ],
      throttle: { rateLimit: aws.api_rate_limit, burstLimit: aws.api_burst_limit },
      signinThrottle: { rateLimit: aws.signin_rate_limit, burstLimit: aws.signin_burst_limit },
      logRetention,
      logRemovalPolicy: retain,
    });
    this.api = http.api;
    this.stage = http.stage;

    // Each feature's functions and routes in a nested stack of its own (feature-stack.ts), named after the first
    // segment of their handlers' paths.
    this.featureStacks = [...byFeature(this.plan)].map(
      ([feature, plan]) =>
        new FeatureStack(this, {
          feature,
          api: this.api,
          plan,
          defaults: functionDefaults,
          lambdaConfigToml: props.deployment.lambdaConfigToml,
          dsn: database.dsn,
          secrets,
          sourceMapsAtRuntime: props.sourceMapsAtRuntime ?? false,
          ...(consoleIsDashboard ? { dashboardUrl: this.dashboardUrl } : {}),
        }),
    );
    this.functions = new Map(this.featureStacks.flatMap((stack) => [...stack.byHandler]));
    migrations.runBefore(...this.functions.values());
    http.throttleSigninRoutes(this.featureStacks.flatMap((stack) => stack.signinRoutes));
    const functionOf = (handler: string) => {
      const fn = this.functions.get(handler);
      if (!fn) throw new Error(`no function for handler "${handler}"`);
      return fn;
    };

    this.consoleSite?.deploy(this.stage.url);

    const schedules = new Schedules(this, 'Schedules', { plan: this.plan, functionOf });

    const archiveWriter = this.functions.get(ARCHIVE_HANDLER);
    this.archive =
      archiveWriter && config.events.archive.target === 's3'
        ? new EventArchive(this, 'EventArchive', {
            prefix: config.events.archive.prefix,
            writer: archiveWriter.role!,
            writerFunction: archiveWriter,
            readerFunctions: ARCHIVE_READERS.flatMap((handler) => this.functions.get(handler) ?? []),
            intelligentTieringAfterDays: ARCHIVE_TIERING_DAYS.intelligentTiering,
            glacierInstantRetrievalAfterDays: ARCHIVE_TIERING_DAYS.glacierInstantRetrieval,
            firstDay: ARCHIVE_FIRST_DAY,
            removalPolicy: retain,
          })
        : undefined;

    const anchorWriter = this.functions.get(ANCHOR_HANDLER);
    this.auditAnchors =
      anchorWriter && config.audit.anchors.target === 's3'
        ? new AuditAnchors(this, 'AuditAnchors', {
            prefix: config.audit.anchors.prefix,
            retentionDays: config.audit.anchors.retention_days,
            writer: anchorWriter,
            readers: ANCHOR_READERS.flatMap((handler) => this.functions.get(handler) ?? []),
            removalPolicy: retain,
          })
        : undefined;

    const alertsFunction = this.functions.get(ALERTS_HANDLER);
    this.alertEvents = alertsFunction
      ? new AlertEvents(this, 'AlertEvents', {
          alertsFunction,
          webhooks: config.alerts.webhooks.length > 0,
          logRetention,
          removalPolicy: retain,
        })
      : undefined;

    const exportDelivery = this.functions.get(EXPORT_HANDLER);
    if (exportDelivery && config.exports.secret_store === 'secretsmanager') {
      if (!config.exports.secret_prefix) {
        throw new Error(
          'exports.secret_prefix is empty: the delivery function would read every secret of the account',
        );
      }
      const secrets = `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${config.exports.secret_prefix}*`;
      const grant = new iam.Policy(exportDelivery, 'ExportSecretsPolicy', {
        statements: [
          new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secrets] }),
        ],
        roles: exportDelivery.role ? [exportDelivery.role] : [],
      });
      Validations.of(grant).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${config.exports.secret_prefix}*]`,
        reason:
          'Operators add a secret per export destination (docs/exports.md) after the deploy, so their names are known only by the prefix.',
      });
    }

    if (exportDelivery && aws.security_lake_bucket) {
      const objects = `arn:${Aws.PARTITION}:s3:::${aws.security_lake_bucket}/${aws.security_lake_prefix}*`;
      const lake = new iam.Policy(exportDelivery, 'ExportSecurityLakePolicy', {
        statements: [new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: [objects] })],
        roles: exportDelivery.role ? [exportDelivery.role] : [],
      });
      Validations.of(lake).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${aws.security_lake_bucket}/${aws.security_lake_prefix}*]`,
        reason:
          "Security Lake names a custom source's objects by partition and day (ext/<source>/region=/accountId=/eventDay=/), so only their prefix is known.",
      });
    }

    const eventsHandler = this.plan.find((planned) =>
      planned.routes.some(
        (route) => route.method === EVENTS_ROUTE.method && route.path === EVENTS_ROUTE.path,
      ),
    );
    const probe = schedules.runs.find((run) => run.handler === PROBE_HANDLER);
    const monitoring = new Monitoring(this, 'Monitoring', {
      stage: this.stage,
      functions: this.plan.map((planned) => ({ name: planned.constructId, fn: functionOf(planned.handler) })),
      ...(eventsHandler ? { eventsFunction: functionOf(eventsHandler.handler) } : {}),
      eventsP99Ms: aws.events_p99_ms,
      ...(exportDelivery
        ? {
            exportLag: {
              namespace: METRIC_NAMESPACE,
              metricName: EXPORT_LAG_METRIC,
              thresholdSeconds: aws.export_lag_seconds,
            },
          }
        : {}),
      ...(probe ? { probe: { fn: probe.fn, everyMs: probe.everyMs } } : {}),
      deadLetterQueues: schedules.deadLetterQueues,
      ...(aws.alarm_email ? { alarmEmail: aws.alarm_email } : {}),
      removalPolicy: retain,
    });

    this.addOutputs(props.deployment, { database, secrets, monitoring, initialAdminEmail });
  }

  /** What the dashboard (web app) and ops need. */
  private addOutputs(
    { config, aws }: Deployment,
    parts: {
      database: NetworkAndDatabase;
      secrets: AppSecrets;
      monitoring: Monitoring;
      initialAdminEmail: string;
    },
  ): void {
    const { database, secrets, monitoring } = parts;
    const output = (outputId: string, value: string, description: string) =>
      new CfnOutput(this, outputId, { value, description });
    const origins = config.cors.allowed_origins;
    output('ApiUrl', this.stage.url, 'Base URL of the API (the dashboard and device agents call it)');
    output('AuthProvider', config.auth.provider, 'auth.provider: local (users + HS256 JWT) or idp');
    if (config.auth.provider === 'idp') {
      output('IdpIssuer', `https://${config.auth.idp_domain}/`, 'Issuer the API accepts tokens from');
      output('IdpAudience', config.auth.idp_audience, 'Audience the API expects in IdP tokens');
    }
    if (this.consoleSite) {
      output('ConsoleUrl', this.consoleSite.url, 'The admin console (sign in with an admin account)');
    }
    if (this.dashboardUrl) {
      output(
        'DashboardUrl',
        this.dashboardUrl,
        config.dashboard_url
          ? 'dashboard_url (CLI sign-in broker; its page is <DashboardUrl>/cli/login)'
          : 'dashboard_url: the console, since the config sets none (the agent signs in at <DashboardUrl>/cli/login)',
      );
    }
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
    output('JwtSecretArn', secrets.jwtSecret.secretArn, 'Secrets Manager secret holding auth.jwt_secret');
    if (secrets.envServiceToken) {
      output(
        'EnvServiceTokenSecretArn',
        secrets.envServiceToken.secretArn,
        'Secret holding the environment service token (put-secret-value)',
      );
    }
    output(
      'AuditIngestTokenSecretArn',
      secrets.auditIngestToken.secretArn,
      "The log shipper's token for POST /v1/admin/audit-logs (get-secret-value)",
    );
    output('DatabaseClusterArn', database.cluster.clusterArn, 'Aurora cluster (Data API resourceArn)');
    output('DatabaseSecretArn', database.secret.secretArn, "The database owner's credentials (migrations)");
    output(
      'ServiceDatabaseSecretArn',
      database.serviceSecret.secretArn,
      "The service role's credentials (every function but Migrate; the Data API secretArn)",
    );
    output('DatabaseName', aws.database_name, 'Database name (Data API database)');
    if (this.archive) {
      output(
        'EventArchiveBucketName',
        this.archive.bucket.bucketName,
        'The event archive (Parquet per hour)',
      );
      output('EventArchiveGlueDatabase', this.archive.databaseName, 'Glue database of the archive (Athena)');
      output('EventArchiveGlueTable', ARCHIVE_TABLE, 'Glue table of the archive (Athena)');
    }
    if (this.auditAnchors) {
      output(
        'AuditAnchorBucketName',
        this.auditAnchors.bucket.bucketName,
        "The audit chain's signed anchors (Object Lock, compliance mode)",
      );
      output(
        'AuditAnchorKeyArn',
        this.auditAnchors.key.keyArn,
        'The KMS key that signs the anchors (get-public-key)',
      );
    }
    if (this.alertEvents) {
      output('AlertEventBusName', this.alertEvents.bus.eventBusName, 'Fleet alerts as EventBridge events');
      if (this.alertEvents.webhookSecret) {
        output(
          'AlertWebhookSecretArn',
          this.alertEvents.webhookSecret.secretArn,
          'The key receivers verify alert webhook signatures with (get-secret-value)',
        );
      }
    }
    if (secrets.initialAdminPassword) {
      output('InitialAdminEmail', parts.initialAdminEmail, 'The first admin (local auth)');
      output(
        'InitialAdminPasswordSecretArn',
        secrets.initialAdminPassword.secretArn,
        'Its initial password (get-secret-value)',
      );
    }
  }
}
