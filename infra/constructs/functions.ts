// The service's functions: one NodejsFunction per planned handler (infra/plan.ts), each with its own role and log
// group, the deployment's config bundled beside it, and the ARNs of the secrets it reads.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { parse as parseToml } from 'smol-toml';
import type { PlannedFunction } from '../plan.ts';
import { contentHash, LAMBDA_CONFIG_PATH } from '../settings.ts';
import { FlatConstruct } from './flat-construct.ts';
import { addServiceFunction, ENV, type FunctionDefaults } from './service-function.ts';

export interface ServiceFunctionsProps {
  plan: PlannedFunction[];
  defaults: FunctionDefaults;
  /** The config every function reads at cold start: Deployment.lambdaConfigToml (the TOML without secrets). */
  lambdaConfigToml: string;
  /** The service's DSN (db.dsn) for the cluster. */
  dsn: string;
  /** The secrets functions read: each function gets the ARNs of those it needs, and may read those only. */
  secrets: {
    jwtSecret: secretsmanager.ISecret;
    envServiceToken: secretsmanager.ISecret | undefined;
    auditIngestToken: secretsmanager.ISecret;
  };
  /** Stack traces through the source maps (NODE_OPTIONS=--enable-source-maps); see ControlPlaneStackProps. */
  sourceMapsAtRuntime: boolean;
  /**
   * dashboard_url when the config file has none and the stack provides one (its console): known at deploy time only,
   * so given as SVC_DASHBOARD_URL rather than in the bundled config.
   */
  dashboardUrl?: string;
}

export class ServiceFunctions extends FlatConstruct {
  /** The function of each planned handler, by handler ("identity/users-create"). */
  readonly byHandler = new Map<string, NodejsFunction>();

  constructor(scope: Construct, id: string, props: ServiceFunctionsProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).
    const { defaults, secrets } = props;
    const samLocal = defaults.samLocal;

    // The config every function reads at cold start: the TOML without secrets, as JSON (loadConfig reads a `.json`
    // file with JSON.parse), copied into each bundle from the staging directory.
    const configDir = join(defaults.stagingDir, 'lambda-config');
    mkdirSync(configDir, { recursive: true });
    const lambdaConfigJson = `${JSON.stringify(parseToml(props.lambdaConfigToml), null, 2)}\n`;
    const lambdaConfigFile = join(configDir, `${contentHash(lambdaConfigJson)}.json`);
    writeFileSync(lambdaConfigFile, lambdaConfigJson);
    const copyConfig = (outputDir: string) =>
      `cp "${lambdaConfigFile}" "${outputDir}/${basename(LAMBDA_CONFIG_PATH)}"`;

    for (const planned of props.plan) {
      const what = [
        ...planned.routes.map((route) => `${route.method} ${route.path}`),
        ...planned.schedules.map((schedule) => `schedule ${schedule.id}`),
      ].join(', ');
      const envServiceToken = planned.usesEnvironmentService ? secrets.envServiceToken : undefined;
      const readsIngestToken = planned.serviceTokens.includes('audit.ingest_token');
      const { fn } = addServiceFunction(scope, planned.constructId, defaults, {
        entry: planned.entry,
        description: `${planned.handler} (${planned.kind}): ${what}`.slice(0, 256),
        roleDescription: `${planned.handler}: ${what}`.slice(0, 1000),
        memorySize: planned.sizing.memoryMb,
        timeout: Duration.seconds(planned.sizing.timeoutSeconds),
        environment: {
          [ENV.config]: LAMBDA_CONFIG_PATH,
          [ENV.dsn]: props.dsn,
          [ENV.jwtSecretArn]: secrets.jwtSecret.secretArn,
          ...(envServiceToken ? { [ENV.envServiceTokenArn]: envServiceToken.secretArn } : {}),
          ...(readsIngestToken ? { [ENV.auditIngestTokenArn]: secrets.auditIngestToken.secretArn } : {}),
          ...(props.dashboardUrl ? { [ENV.dashboardUrl]: props.dashboardUrl } : {}),
          ...(props.sourceMapsAtRuntime ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
          // `sam local` only passes variables the template declares; its env-vars file gives the values.
          ...(samLocal ? { SVC_JWT_SECRET: '' } : {}),
          ...(samLocal && planned.usesEnvironmentService ? { SVC_ENVSVC_TOKEN: '' } : {}),
          ...(samLocal && readsIngestToken ? { SVC_AUDIT_INGEST_TOKEN: '' } : {}),
        },
        readsSecrets: [
          secrets.jwtSecret,
          ...(envServiceToken ? [envServiceToken] : []),
          ...(readsIngestToken ? [secrets.auditIngestToken] : []),
        ],
        afterBundling: (_inputDir, outputDir) => [copyConfig(outputDir)],
      });
      this.byHandler.set(planned.handler, fn);
    }
  }

  /** The function of `handler`; throws for a handler that is not planned. */
  of(handler: string): NodejsFunction {
    const fn = this.byHandler.get(handler);
    if (!fn) throw new Error(`no function for handler "${handler}"`);
    return fn;
  }
}
