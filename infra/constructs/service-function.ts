// One Lambda of the service, built as every one is (the route-table functions and Migrate): its own log group and
// role (the Data API on the cluster, GetSecretValue on exactly the secrets it reads), Node.js 24 on arm64, bundled by
// infra/bundling.ts. Not a construct: the parts that own functions call it.
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Duration, type RemovalPolicy, Stage } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { COMMAND_LINE_OPTIONS } from '#shared/core/config/load.ts';
import { lambdaBundling } from '../bundling.ts';

/** Environment variable names the functions read (see shared/core/config/load.ts and the secrets hook). */
export const ENV = {
  config: 'SVC_CONFIG',
  dsn: 'SVC_DB_DSN',
  jwtSecretArn: 'SVC_JWT_SECRET_ARN',
  envServiceTokenArn: 'SVC_ENVSVC_TOKEN_ARN',
  auditIngestTokenArn: 'SVC_AUDIT_INGEST_TOKEN_ARN',
  dashboardUrl: COMMAND_LINE_OPTIONS['--dashboard-url'].env,
} as const;

/**
 * Where files the bundling hooks copy into the bundles are staged: inside the cloud assembly (cdk.out). Absolute:
 * under the CDK CLI the outdir is relative (`cdk.out`), and esbuild reads a relative entry path such as the route
 * modules' as a package name.
 */
export function stagingDirOf(scope: Construct): string {
  return resolve(Stage.of(scope)?.outdir ?? tmpdir());
}

/** What every function of one deployment shares. */
export interface FunctionDefaults {
  /** The repository root: functions/, migrations/, package-lock.json. */
  projectRoot: string;
  /** See stagingDirOf. */
  stagingDir: string;
  /** Source maps in the bundles. */
  sourceMaps: boolean;
  /** Also bundle the node-postgres driver, for `sam local` against a local PostgreSQL. */
  samLocal: boolean;
  logRetention: logs.RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  /** The cluster every function reaches through the Data API. */
  database: { grantDataApi(role: iam.IRole): void };
}

export interface ServiceFunctionProps {
  /** The handler module (exports `handler`). */
  entry: string;
  description: string;
  roleDescription: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  /** The secrets it reads (GetSecretValue on each, in this order), besides the database's. */
  readsSecrets: secretsmanager.ISecret[];
  /** Shell commands run after esbuild, e.g. to copy what the function reads next to its bundle. */
  afterBundling: (inputDir: string, outputDir: string) => string[];
}

export interface ServiceFunction {
  fn: NodejsFunction;
  role: iam.Role;
  logGroup: logs.LogGroup;
}

/** Creates, in `scope`, the log group `<id>Logs`, the role `<id>Role` and the function `<id>`. */
export function addServiceFunction(
  scope: Construct,
  id: string,
  defaults: FunctionDefaults,
  props: ServiceFunctionProps,
): ServiceFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: defaults.logRetention,
    removalPolicy: defaults.logRemovalPolicy,
  });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: props.roleDescription,
  });
  logGroup.grantWrite(role);
  defaults.database.grantDataApi(role);
  for (const secret of props.readsSecrets) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
    );
  }
  const fn = new NodejsFunction(scope, id, {
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    handler: 'handler',
    projectRoot: defaults.projectRoot,
    depsLockFilePath: join(defaults.projectRoot, 'package-lock.json'),
    entry: props.entry,
    description: props.description,
    memorySize: props.memorySize,
    timeout: props.timeout,
    role,
    logGroup,
    environment: props.environment,
    bundling: lambdaBundling({
      entry: props.entry,
      stagingDir: defaults.stagingDir,
      sourceMap: defaults.sourceMaps,
      includePostgresDriver: defaults.samLocal,
      afterBundling: props.afterBundling,
    }),
  });
  return { fn, role, logGroup };
}
