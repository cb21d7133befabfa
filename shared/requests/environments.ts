import type { Config } from '../core/config/schema.ts';
import type { Database } from '../core/db/database.ts';
import type { ProbeCheck } from '../health/health.ts';
import { createBuiltinProvider, createBuiltinQuerier } from './environments/builtin/provider.ts';
import { createHttpProvider, createHttpQuerier, pingEnvironmentService } from './environments/http.ts';
import {
  type EnvironmentProvider,
  type EnvironmentQuerier,
  environmentSettings,
} from './environments/types.ts';

/** The provider the configuration names (envsvc.provider; builtin by default). */
export function providerFor(database: Database, config: Config): EnvironmentProvider {
  const settings = environmentSettings(config);
  if (settings.provider === 'http') {
    return createHttpProvider({ url: settings.url, token: settings.token, timeoutMs: settings.timeoutMs });
  }
  return createBuiltinProvider(database);
}

/**
 * Only the query side of that provider (the query function's): its bundle then leaves out the provisioning code the
 * query path never runs.
 */
export function querierFor(database: Database, config: Config): EnvironmentQuerier {
  const settings = environmentSettings(config);
  if (settings.provider === 'http') {
    return createHttpQuerier({ url: settings.url, token: settings.token, timeoutMs: settings.timeoutMs });
  }
  return createBuiltinQuerier(database);
}

/** What the background probe checks besides the database: the environment service, when one is configured. */
export function environmentProbeChecks(config: Config): ProbeCheck[] {
  const settings = environmentSettings(config);
  if (settings.provider !== 'http') return [];
  const options = { url: settings.url, token: settings.token, timeoutMs: settings.timeoutMs };
  return [{ name: 'environment_service', run: () => pingEnvironmentService(options) }];
}
