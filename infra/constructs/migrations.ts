// Migrations on deploy: the Migrate function (migrations/ through the Data API as the owner, the service role's
// password from its secret, and with local auth the first admin, once) and the CDK Trigger that runs it after the cluster exists and before the functions of the deployment change.
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as triggers from 'aws-cdk-lib/triggers';
import type { Construct, IConstruct } from 'constructs';
import { FlatConstruct } from './flat-construct.ts';
import type { NetworkAndDatabase } from './network-and-database.ts';
import { addServiceFunction, ENV, type FunctionDefaults } from './service-function.ts';

export interface MigrationsOnDeployProps {
  defaults: FunctionDefaults;
  /** The cluster it migrates (and waits for), as its owner; it sets the service role's password. */
  database: Pick<NetworkAndDatabase, 'cluster' | 'ownerDsn' | 'serviceSecret' | 'grantOwnerDataApi'>;
  /** With local auth: the first admin it creates, once, and the secret holding that admin's password. */
  initialAdmin?: { email: string; password: secretsmanager.ISecret };
}

export class MigrationsOnDeploy extends FlatConstruct {
  readonly fn: NodejsFunction;
  readonly trigger: triggers.Trigger;

  constructor(scope: Construct, id: string, props: MigrationsOnDeployProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).
    const { defaults, initialAdmin } = props;
    const entry = join(defaults.projectRoot, 'infra/functions/migrate.ts');
    const migrate = addServiceFunction(scope, 'Migrate', defaults, {
      entry,
      description: 'Applies migrations/ through the Data API on deploy (CDK Trigger)',
      roleDescription: 'Migrations on deploy: Data API on the cluster',
      memorySize: 512,
      timeout: Duration.minutes(5),
      environment: {
        [ENV.dsn]: props.database.ownerDsn,
        // sam local runs everything as the env-vars file's user, with no Secrets Manager.
        ...(defaults.samLocal ? {} : { SVC_DB_SERVICE_SECRET_ARN: props.database.serviceSecret.secretArn }),
        ...(initialAdmin
          ? {
              SVC_ADMIN_EMAIL: initialAdmin.email,
              SVC_ADMIN_PASSWORD_ARN: initialAdmin.password.secretArn,
              // `sam local` only passes variables the template declares; its env-vars file gives the value.
              ...(defaults.samLocal ? { SVC_ADMIN_PASSWORD: '' } : {}),
            }
          : {}),
      },
      readsSecrets: initialAdmin ? [initialAdmin.password] : [],
      afterBundling: (inputDir, outputDir) => [
        `mkdir -p "${outputDir}/migrations"`,
        `cp "${inputDir}"/migrations/*.sql "${outputDir}/migrations/"`,
      ],
    });
    // Migrations run as the owner; every other function connects as the service role.
    props.database.grantOwnerDataApi(migrate.role);
    this.fn = migrate.fn;
    this.trigger = new triggers.Trigger(scope, 'MigrateOnDeploy', {
      handler: this.fn,
      // The writer instance is a child of the cluster construct, as are its secret and attachment.
      executeAfter: [props.database.cluster, migrate.role],
      timeout: Duration.minutes(6),
    });
  }

  /** New code starts serving only once the schema it expects is in place: `scopes` wait for the migrations. */
  runBefore(...scopes: IConstruct[]): void {
    this.trigger.executeBefore(...scopes);
  }
}
