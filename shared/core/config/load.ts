import { existsSync, readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { type Config, configSchema } from './schema.ts';

export const DEFAULT_CONFIG_FILE = 'config/local.toml';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface LoadConfigOptions {
  /** Command-line arguments (without node and script), e.g. ["--config", "x.toml", "--port", "9000"]. */
  argv?: readonly string[];
  /** The environment; the only place in the service that reads it. */
  env?: NodeJS.ProcessEnv;
  /** Values merged over the file before environment overrides (tests use this). */
  overrides?: Record<string, unknown>;
  /** Secrets read by ARN at cold start (shared/core/config/secrets.ts), as dotted config key → value; below direct values. */
  secrets?: Readonly<Record<string, string | undefined>>;
}

type Table = Record<string, unknown>;

/** The command-line options (of `npm start`): the environment variable that does the same, and the config key. */
export const COMMAND_LINE_OPTIONS = {
  '--config': {
    env: 'SVC_CONFIG',
    key: undefined,
    help: `config file: TOML, or JSON when it ends in .json (default ${DEFAULT_CONFIG_FILE})`,
  },
  '--port': { env: 'PORT', key: 'port', help: 'port to listen on' },
  '--host': { env: 'HOST', key: 'host', help: 'address to listen on' },
  '--dashboard-url': {
    env: 'SVC_DASHBOARD_URL',
    key: 'dashboard_url',
    help: 'the dashboard; enables the CLI sign-in (/v1/auth/cli/*) and so device enrollment',
  },
} as const;

/** Environment variables without a command-line option, and the config key each overrides. */
export const ENVIRONMENT_OVERRIDES = {
  SVC_DB_DSN: 'db.dsn',
  SVC_DATA_DIR: 'data_dir',
  SVC_LOG_LEVEL: 'log.level',
  SVC_JWT_SECRET: 'auth.jwt_secret',
  IDP_DOMAIN: 'auth.idp_domain',
  IDP_AUDIENCE: 'auth.idp_audience',
  IDP_CLIENT_ID: 'auth.idp_client_id',
  SVC_ADMIN_EMAIL: 'bootstrap.admin_email',
  SVC_ADMIN_PASSWORD: 'bootstrap.admin_password',
  SVC_ENVSVC_TOKEN: 'envsvc.token',
  SVC_AUDIT_INGEST_TOKEN: 'audit.ingest_token',
  SVC_ALERTS_WEBHOOK_SECRET: 'alerts.webhook_secret',
  // The archive bucket the stack creates (given to the archive function only).
  SVC_ARCHIVE_BUCKET: 'events.archive.bucket',
  // The audit anchors' bucket and signing key the stack creates (given to the functions that write or check anchors).
  SVC_AUDIT_ANCHOR_BUCKET: 'audit.anchors.bucket',
  SVC_AUDIT_ANCHOR_KMS_KEY: 'audit.anchors.kms_key_id',
  // The alert event bus the stack creates (given to the alerts function only).
  SVC_ALERTS_EVENT_BUS: 'alerts.eventbridge.bus',
} as const;
type OptionName = keyof typeof COMMAND_LINE_OPTIONS;

/** Refuses what is not a known option with its value: a typo must not start the service on other settings. */
function checkArgv(argv: readonly string[]): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const name = arg.split('=')[0] as string;
    if (!Object.hasOwn(COMMAND_LINE_OPTIONS, name)) {
      throw new ConfigError(
        `unknown option ${arg} (options: ${Object.keys(COMMAND_LINE_OPTIONS).join(', ')}, --help)`,
      );
    }
    if (arg.includes('=')) continue;
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new ConfigError(`option ${arg} needs a value`);
    i++;
  }
}

function flag(argv: readonly string[], name: OptionName): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === name) return argv[i + 1];
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return undefined;
}

function setPath(target: Table, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Table;
  }
  node[keys.at(-1) as string] = value;
}

function deepMerge(base: Table, extra: Table): Table {
  const out: Table = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const prev = out[key];
    out[key] =
      typeof value === 'object' && value !== null && !Array.isArray(value) && typeof prev === 'object' && prev
        ? deepMerge(prev as Table, value as Table)
        : value;
  }
  return out;
}

/** Turns zod issues into one message that names each offending key, e.g. "auth.jwt_secret: must be ...". */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * The file's table: JSON for a `.json` file (the Lambda bundles carry their config as JSON, written by the stack from
 * the TOML), TOML for any other name. Either way the table goes through the same
 * overrides and the same validation.
 */
function parseConfigText(file: string, text: string): Table {
  const json = file.endsWith('.json');
  let value: unknown;
  try {
    value = json ? JSON.parse(text) : parseToml(text);
  } catch (err) {
    throw new ConfigError(
      `config file ${file} is not valid ${json ? 'JSON' : 'TOML'}: ${(err as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`config file ${file} is not valid JSON: the top level must be an object`);
  return value as Table;
}

/**
 * Reads the config file (`--config PATH`, else SVC_CONFIG, else config/local.toml; a missing default file means
 * "all defaults"; TOML, or JSON when the name ends in `.json`), applies the environment overrides of the spec and
 * the command-line options, and validates.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const argv = options.argv ?? [];
  checkArgv(argv);
  const env = options.env ?? {};
  const explicitFile = flag(argv, '--config') ?? env.SVC_CONFIG;
  const file = explicitFile ?? DEFAULT_CONFIG_FILE;

  let raw: Table = {};
  if (explicitFile !== undefined || existsSync(file)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
    }
    raw = parseConfigText(file, text);
  }
  if (options.overrides) raw = deepMerge(raw, options.overrides);
  for (const [path, value] of Object.entries(options.secrets ?? {})) if (value) setPath(raw, path, value);

  const fromEnv: Array<[string, string | undefined]> = [
    ...Object.entries(ENVIRONMENT_OVERRIDES).map(([name, key]): [string, string | undefined] => [
      key,
      env[name],
    ]),
    ...Object.entries(COMMAND_LINE_OPTIONS).flatMap(
      ([name, o]): Array<[string, string | undefined]> =>
        o.key ? [[o.key, flag(argv, name as OptionName) ?? env[o.env]]] : [],
    ),
  ];
  for (const [path, value] of fromEnv) if (value !== undefined && value !== '') setPath(raw, path, value);

  // Parsed once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = configSchema.safeParse(raw, { jitless: true });
  if (!parsed.success)
    throw new ConfigError(`invalid configuration (${file}): ${describeIssues(parsed.error)}`);
  return parsed.data;
}
