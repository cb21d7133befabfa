// What the stack is built from: the service's TOML config (the one file ops edit; chosen by the CDK context value
// `config`) plus the AWS-only settings (region, Aurora capacity, retention, throttling, alarms). The AWS settings
// come from CDK context, then an optional `[aws]` table of the same TOML, then the defaults below.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseToml, stringify as stringifyToml, type TomlTable } from 'smol-toml';
import * as z from 'zod';
import { parseDuration } from '#shared/core/config/duration.ts';
import { describeIssues } from '#shared/core/config/load.ts';
import { type Config, configSchema } from '#shared/core/config/schema.ts';
import { s3BucketName } from '#shared/exports/destinations/settings.ts';

export const DEFAULT_DEPLOY_CONFIG = 'config/prod.toml';

/** Where the bundled config sits in every function, as JSON (loadConfig reads it through SVC_CONFIG). */
export const LAMBDA_CONFIG_PATH = '/var/task/config.json';

/** Keys that never go into a bundle: secrets (Secrets Manager), the DSN (built by the stack), AWS settings. */
const STRIPPED_KEYS: ReadonlyArray<readonly string[]> = [
  ['auth', 'jwt_secret'],
  ['envsvc', 'token'],
  ['audit', 'ingest_token'],
  ['alerts', 'webhook_secret'],
  ['db', 'dsn'],
  ['bootstrap'],
  ['aws'],
];

// Only to get past the schema's "a prod config has a jwt_secret" rule at synth time; never written anywhere, and made
// per synth so that no secret-shaped value is committed.
const SYNTH_PLACEHOLDER_SECRET = randomBytes(32).toString('base64url');

const RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const durationMs = z.string().transform((value, ctx) => {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration like 10m or 7d` });
    return z.NEVER;
  }
  return ms;
});
// CDK context given on the command line (-c key=value) arrives as a string.
const num = (min: number, max: number) => z.coerce.number().min(min).max(max);
const bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

const awsSchema = z
  .object({
    stack_name: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/),
    account: z
      .string()
      .regex(/^\d{12}$/)
      .optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/)
      .optional(),
    database_name: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/),
    db_max_acu: num(1, 256).refine((v) => Number.isInteger(v * 2), 'must be a multiple of 0.5'),
    db_auto_pause: durationMs.refine((ms) => ms >= 300_000 && ms <= 86_400_000, 'must be between 5m and 1d'),
    db_backup_retention: durationMs.refine(
      (ms) => ms % 86_400_000 === 0 && ms >= 86_400_000 && ms <= 35 * 86_400_000,
      'must be whole days between 1d and 35d',
    ),
    log_retention_days: z.coerce
      .number()
      .refine(
        (v) => (RETENTION_DAYS as readonly number[]).includes(v),
        `must be one of ${RETENTION_DAYS.join(', ')}`,
      ),
    api_rate_limit: num(1, 10_000),
    api_burst_limit: num(1, 5_000),
    // Per-route throttling of the sign-in routes (POST /v1/auth/login, POST /v1/auth/cli/token), below the API's.
    signin_rate_limit: num(1, 10_000),
    signin_burst_limit: num(1, 5_000),
    alarm_email: z.email().optional(),
    events_p99_ms: num(10, 29_000),
    // The ExportLag alarm: an enabled export destination's oldest undelivered record (over its tool calls and class
    // streams) older than this, in seconds.
    export_lag_seconds: num(60, 86_400),
    // The Amazon Security Lake bucket the deliver function may write to (s3:PutObject under security_lake_prefix,
    // where Security Lake puts its custom sources); none without a bucket.
    security_lake_bucket: s3BucketName.optional(),
    security_lake_prefix: z
      .string()
      .regex(/^([A-Za-z0-9_.=-]+\/)+$/, 'must be a key prefix ending in / (e.g. ext/), without wildcards'),
    // The admin console on S3 + CloudFront (infra/constructs/console-site.ts).
    console: bool,
  })
  .strict()
  .superRefine((aws, ctx) => {
    for (const [key, api] of [
      ['signin_rate_limit', 'api_rate_limit'],
      ['signin_burst_limit', 'api_burst_limit'],
    ] as const) {
      if (aws[key] > aws[api]) {
        ctx.addIssue({ code: 'custom', path: [key], message: `must not be above ${api} (${aws[api]})` });
      }
    }
  });

export type AwsSettings = z.output<typeof awsSchema>;

export const AWS_DEFAULTS = {
  stack_name: 'AgentControlPlane',
  database_name: 'controlplane',
  db_max_acu: 4,
  db_auto_pause: '10m',
  db_backup_retention: '7d',
  log_retention_days: 30,
  api_rate_limit: 100,
  api_burst_limit: 200,
  signin_rate_limit: 5,
  signin_burst_limit: 10,
  events_p99_ms: 1_000,
  export_lag_seconds: 1_800,
  security_lake_prefix: 'ext/',
  console: true,
} as const;

/** CDK context key (camelCase, what `-c` takes) for each AWS setting. */
export const AWS_CONTEXT_KEYS: Record<keyof AwsSettings, string> = {
  stack_name: 'stackName',
  account: 'account',
  region: 'region',
  database_name: 'databaseName',
  db_max_acu: 'dbMaxAcu',
  db_auto_pause: 'dbAutoPause',
  db_backup_retention: 'dbBackupRetention',
  log_retention_days: 'logRetentionDays',
  api_rate_limit: 'apiRateLimit',
  api_burst_limit: 'apiBurstLimit',
  signin_rate_limit: 'signinRateLimit',
  signin_burst_limit: 'signinBurstLimit',
  alarm_email: 'alarmEmail',
  events_p99_ms: 'eventsP99Ms',
  export_lag_seconds: 'exportLagSeconds',
  security_lake_bucket: 'securityLakeBucket',
  security_lake_prefix: 'securityLakePrefix',
  console: 'console',
};

export interface Deployment {
  /** The TOML file the stack was built from. */
  file: string;
  /** The service config, validated by the service's own schema. */
  config: Config;
  aws: AwsSettings;
  /**
   * The config each function reads at cold start (the stack bundles it as JSON): the file without its secrets, DSN
   * and [aws] table.
   */
  lambdaConfigToml: string;
  /** Things ops should know about (e.g. a secret that was in the file and was left out). */
  warnings: string[];
}

export class DeploymentConfigError extends Error {
  override name = 'DeploymentConfigError';
}

function isTable(value: unknown): value is TomlTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function without(table: TomlTable, path: readonly string[]): { table: TomlTable; removed: boolean } {
  const [head, ...rest] = path as [string, ...string[]];
  if (!(head in table)) return { table, removed: false };
  if (rest.length === 0) {
    const { [head]: _dropped, ...others } = table;
    return { table: others, removed: true };
  }
  const child = table[head];
  if (!isTable(child)) return { table, removed: false };
  const inner = without(child, rest);
  return { table: { ...table, [head]: inner.table }, removed: inner.removed };
}

/**
 * Reads and validates the deployment's config. `context` is the CDK context (values given with -c win over the
 * file's [aws] table). A prod config that carries a secret (auth.jwt_secret, bootstrap.admin_password) is refused:
 * in AWS they live in Secrets Manager.
 */
export function loadDeployment(file: string, context: Record<string, unknown> = {}): Deployment {
  let raw: TomlTable;
  try {
    raw = parseToml(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DeploymentConfigError(`cannot read config ${file}: ${(err as Error).message}`);
  }
  const warnings: string[] = [];
  const fileAws = isTable(raw.aws) ? raw.aws : {};
  const auth = isTable(raw.auth) ? raw.auth : {};
  const bootstrap = isTable(raw.bootstrap) ? raw.bootstrap : {};
  const envsvc = isTable(raw.envsvc) ? raw.envsvc : {};
  const audit = isTable(raw.audit) ? raw.audit : {};
  const alerts = isTable(raw.alerts) ? raw.alerts : {};
  const secretsInFile: string[] = [];
  if (typeof auth.jwt_secret === 'string' && auth.jwt_secret !== '') secretsInFile.push('auth.jwt_secret');
  if (typeof envsvc.token === 'string' && envsvc.token !== '') secretsInFile.push('envsvc.token');
  if (typeof audit.ingest_token === 'string' && audit.ingest_token !== '') {
    secretsInFile.push('audit.ingest_token');
  }
  if (typeof alerts.webhook_secret === 'string' && alerts.webhook_secret !== '') {
    secretsInFile.push('alerts.webhook_secret');
  }
  if (typeof bootstrap.admin_password === 'string' && bootstrap.admin_password !== '') {
    secretsInFile.push('bootstrap.admin_password');
  }
  for (const key of secretsInFile) {
    if (raw.env === 'prod') {
      throw new DeploymentConfigError(
        `${file}: ${key} must not be in a prod config; the stack generates it in Secrets Manager`,
      );
    }
    warnings.push(
      `${file}: ${key} is ignored; the functions read the secret the stack generates in Secrets Manager`,
    );
  }

  let lambdaTable = raw;
  for (const path of STRIPPED_KEYS) lambdaTable = without(lambdaTable, path).table;

  // Validated as the service validates it (bootstrap.admin_email is the stack's too: the first admin).
  const { aws: _aws, ...service } = raw;
  const forValidation = {
    ...without(without(service, ['bootstrap', 'admin_password']).table, ['envsvc', 'token']).table,
    auth: { ...auth, jwt_secret: SYNTH_PLACEHOLDER_SECRET },
    // The webhook secret is the stack's (AlertWebhookSecret), read at cold start.
    ...(isTable(raw.alerts) ? { alerts: { ...alerts, webhook_secret: SYNTH_PLACEHOLDER_SECRET } } : {}),
  };
  const parsed = configSchema.safeParse(forValidation);
  if (!parsed.success) {
    throw new DeploymentConfigError(`invalid configuration (${file}): ${describeIssues(parsed.error)}`);
  }

  const fromContext: Record<string, unknown> = {};
  for (const [key, contextKey] of Object.entries(AWS_CONTEXT_KEYS)) {
    const value = context[contextKey];
    if (value !== undefined && value !== '') fromContext[key] = value;
  }
  const aws = awsSchema.safeParse({ ...AWS_DEFAULTS, ...fileAws, ...fromContext });
  if (!aws.success) {
    throw new DeploymentConfigError(
      `invalid AWS settings (context or [aws] of ${file}): ${describeIssues(aws.error)}`,
    );
  }

  if (!parsed.data.dashboard_url && !aws.data.console) {
    // What the local server logs at start, said where ops see it: at synth and deploy. With the console in the stack,
    // it is the dashboard (infra/stack.ts).
    warnings.push(
      `${file}: CLI sign-in is disabled: no dashboard_url and no console (-c console=false), so /v1/auth/cli/* is not deployed and no new device can register (403 enrollment_disabled); enrolled devices keep reporting`,
    );
  }

  const { auth: settled } = parsed.data;
  if (aws.data.console && settled.provider === 'idp' && !settled.idp_bypass && !settled.idp_client_id) {
    warnings.push(
      `${file}: the console cannot sign in: auth.provider = "idp" without auth.idp_client_id (register the console at the identity provider as a public OIDC client, docs/identity-provider.md)`,
    );
  }

  const header =
    `# Generated by the CDK stack from ${file} (secrets, db.dsn and [aws] left out).\n` +
    `# The functions read it through SVC_CONFIG; edit ${file} and deploy instead of changing this copy.\n`;
  return {
    file,
    config: { ...parsed.data, auth: { ...parsed.data.auth, jwt_secret: '' } },
    aws: aws.data,
    lambdaConfigToml: `${header}${stringifyToml(lambdaTable)}\n`,
    warnings,
  };
}

/** A short content hash, for file names of generated artifacts. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
