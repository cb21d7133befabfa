// The database and its network: Aurora PostgreSQL Serverless v2 with the Data API, its generated credentials, in a
// VPC of isolated subnets that holds the database only (the functions stay outside and use the Data API). Two
// database users: the owner (the cluster's master user), whom only the Migrate function uses, and the service role
// `<database>_service` (migrations/0034_service_role.sql), whose password Migrate sets from its own secret and with
// which every other function connects.
import { type Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { FlatConstruct } from './flat-construct.ts';

/** What a function may do on the cluster through the Data API (nothing else: no rds-data:* wildcard). */
export const DATA_API_ACTIONS = [
  'rds-data:BatchExecuteStatement',
  'rds-data:BeginTransaction',
  'rds-data:CommitTransaction',
  'rds-data:ExecuteStatement',
  'rds-data:RollbackTransaction',
] as const;

export interface NetworkAndDatabaseProps {
  /** The database the cluster creates (the Data API's `database`). */
  databaseName: string;
  /** Aurora Serverless v2 maximum capacity in ACU; the minimum is 0. */
  maxCapacity: number;
  /** Idle time before the cluster pauses. */
  autoPause: Duration;
  backupRetention: Duration;
  /** PostgreSQL `statement_timeout` in milliseconds (db.statement_timeout). */
  statementTimeoutMs: number;
  /** Retention of the VPC's flow log. */
  logRetention: logs.RetentionDays;
  /**
   * env = "prod": deletion protection on, and the cluster and the flow log are retained when removed from the
   * stack. Otherwise the stack stays removable (a final snapshot of the cluster is kept).
   */
  production: boolean;
}

export class NetworkAndDatabase extends FlatConstruct {
  readonly vpc: ec2.Vpc;
  readonly cluster: rds.DatabaseCluster;
  /** The cluster's master credentials (the owner, who runs the migrations), as the Data API reads them. */
  readonly secret: secretsmanager.ISecret;
  /** The service role's credentials (`<database>_service`): every function but Migrate connects with them. */
  readonly serviceSecret: secretsmanager.ISecret;
  /** The service's DSN for this cluster (db.dsn): `data-api://<database>?resourceArn=…&secretArn=<service secret>`. */
  readonly dsn: string;
  /** The owner's DSN, the Migrate function's. */
  readonly ownerDsn: string;

  constructor(scope: Construct, id: string, props: NetworkAndDatabaseProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).

    // ---- Network: isolated subnets for the database only. ----
    const flowLogs = new logs.LogGroup(scope, 'VpcFlowLogs', {
      retention: props.logRetention,
      removalPolicy: props.production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.vpc = new ec2.Vpc(scope, 'Vpc', {
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
    const parameterGroup = new rds.ParameterGroup(scope, 'DatabaseParameters', {
      engine,
      description: 'Control plane: statement timeout under API Gateway 30 s, UTC',
      parameters: {
        statement_timeout: String(props.statementTimeoutMs),
        timezone: 'UTC',
      },
    });
    // To run the stack on restored data, this is where rds.DatabaseClusterFromSnapshot would replace it
    // (docs/operations.md, "Make the stack run on restored data").
    this.cluster = new rds.DatabaseCluster(scope, 'Database', {
      engine,
      writer: rds.ClusterInstance.serverlessV2('writer', { autoMinorVersionUpgrade: true }),
      serverlessV2MinCapacity: 0,
      serverlessV2MaxCapacity: props.maxCapacity,
      serverlessV2AutoPauseDuration: props.autoPause,
      enableDataApi: true,
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      credentials: rds.Credentials.fromGeneratedSecret('controlplane_admin'),
      defaultDatabaseName: props.databaseName,
      parameterGroup,
      storageEncrypted: true,
      iamAuthentication: true,
      backup: { retention: props.backupRetention, preferredWindow: '03:00-04:00' },
      preferredMaintenanceWindow: 'sun:04:30-sun:05:30',
      deletionProtection: props.production,
      removalPolicy: props.production ? RemovalPolicy.RETAIN : RemovalPolicy.SNAPSHOT,
      copyTagsToSnapshot: true,
    });
    this.secret = this.cluster.secret!;
    const serviceSecret = new rds.DatabaseSecret(scope, 'ServiceDatabaseSecret', {
      username: `${props.databaseName.slice(0, 55)}_service`,
    });
    this.serviceSecret = serviceSecret.attach(this.cluster);
    const dsnWith = (secret: secretsmanager.ISecret) =>
      `data-api://${props.databaseName}?resourceArn=${this.cluster.clusterArn}&secretArn=${secret.secretArn}`;
    this.dsn = dsnWith(this.serviceSecret);
    this.ownerDsn = dsnWith(this.secret);
    this.acknowledgeFindings(props.production, serviceSecret);
  }

  /** Lets `role` run statements on this cluster through the Data API as the service role, and nothing else on it. */
  grantDataApi(role: iam.IRole): void {
    this.grantDataApiAs(role, this.serviceSecret);
  }

  /** Lets `role` run statements through the Data API as the owner (the Migrate function only). */
  grantOwnerDataApi(role: iam.IRole): void {
    this.grantDataApiAs(role, this.secret);
  }

  private grantDataApiAs(role: iam.IRole, secret: secretsmanager.ISecret): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: [...DATA_API_ACTIONS], resources: [this.cluster.clusterArn] }),
    );
    // The Data API fetches the database credentials with the caller's identity.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
    );
  }

  /** cdk-nag findings on the database that are decisions, each with its reason. */
  private acknowledgeFindings(production: boolean, serviceSecret: Construct): void {
    // cluster.secret is the attachment; the generated secret itself is the cluster's child "Secret".
    Validations.of(this.cluster.node.findChild('Secret')).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The database is reached only through the Data API, which reads this secret on every call, so rotation is ' +
        'transparent; a rotation Lambda would need the VPC plus a Secrets Manager interface endpoint (there is no ' +
        'NAT). Rotate by runbook until that cost is justified.',
    });
    Validations.of(serviceSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "The service role's password: Migrate sets it on every deploy from this secret, and the Data API reads the " +
        'secret on every call; rotate by runbook (put a new password, then deploy).',
    });
    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-RDS11',
      reason:
        'The default port is not reachable from anywhere: isolated subnets, no ingress rule; clients use the Data ' +
        'API over HTTPS.',
    });
    if (!production) {
      Validations.of(this.cluster).acknowledge({
        id: 'AwsSolutions-RDS10',
        reason: 'Deletion protection is on when env = "prod"; non-production stacks must be removable.',
      });
    }
  }
}
