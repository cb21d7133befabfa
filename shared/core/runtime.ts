import { loadConfig } from './config/load.ts';
import type { Config } from './config/schema.ts';
import { resolveSecretArns } from './config/secrets.ts';
import { connectDatabase } from './db/connect.ts';
import type { Database } from './db/database.ts';
import { setLogLevel } from './logger.ts';

/**
 * What every handler needs and what outlives one invocation: the validated config and the database. In Lambda it
 * is built once per container at the first invocation; the local server and tests install their own.
 */
export interface Runtime {
  config: Config;
  database: Database;
  startedAt: Date;
  /** Running in AWS Lambda (the healthcheck reports it). */
  lambda: boolean;
}

let current: Promise<Runtime> | undefined;

export function setRuntime(runtime: Runtime | undefined): void {
  current = runtime ? Promise.resolve(runtime) : undefined;
}

export async function createRuntime(config: Config, lambda = false): Promise<Runtime> {
  setLogLevel(config.log.level);
  return { config, database: await connectDatabase(config), startedAt: new Date(), lambda };
}

/** A deployed function's runtime: config from its environment, secrets read by ARN from Secrets Manager. */
async function runtimeFromEnvironment(env: NodeJS.ProcessEnv): Promise<Runtime> {
  const secrets = await resolveSecretArns(env);
  return createRuntime(loadConfig({ argv: [], env, secrets }), Boolean(env.AWS_LAMBDA_FUNCTION_NAME));
}

export function getRuntime(): Promise<Runtime> {
  if (!current) {
    // The one place in a deployed function that reads the environment.
    const attempt = runtimeFromEnvironment(process.env);
    // A failed start (bad config, secret not readable) must not be cached: the next invocation tries again.
    attempt.catch(() => {
      if (current === attempt) current = undefined;
    });
    current = attempt;
  }
  return current;
}
