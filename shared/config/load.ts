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
  /** Secrets read by ARN at cold start (config/secrets.ts), as dotted config key → value; below direct values. */
  secrets?: Readonly<Record<string, string | undefined>>;
}

type Table = Record<string, unknown>;

function flag(argv: readonly string[], name: string): string | undefined {
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
 * the TOML, so that they need no TOML parser), TOML for any other name. Either way the table goes through the same
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
    ['db.dsn', env.SVC_DB_DSN],
    ['auth.jwt_secret', env.SVC_JWT_SECRET],
    ['auth.idp_domain', env.IDP_DOMAIN],
    ['auth.idp_audience', env.IDP_AUDIENCE],
    ['dashboard_url', flag(argv, '--dashboard-url') ?? env.SVC_DASHBOARD_URL],
    ['port', flag(argv, '--port') ?? env.PORT],
    ['host', flag(argv, '--host') ?? env.HOST],
    ['bootstrap.admin_email', env.SVC_ADMIN_EMAIL],
    ['bootstrap.admin_password', env.SVC_ADMIN_PASSWORD],
    ['envsvc.token', env.SVC_ENVSVC_TOKEN],
  ];
  for (const [path, value] of fromEnv) if (value !== undefined && value !== '') setPath(raw, path, value);

  const parsed = configSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError(`invalid configuration (${file}): ${describeIssues(parsed.error)}`);
  return parsed.data;
}
