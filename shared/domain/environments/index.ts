import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import { createBuiltinProvider } from './builtin.ts';
import { createHttpProvider } from './http.ts';
import { type EnvironmentProvider, environmentSettings } from './types.ts';

/** The provider the configuration names (envsvc.provider; builtin by default). */
export function providerFor(database: Database, config: Config): EnvironmentProvider {
  const settings = environmentSettings(config);
  if (settings.provider === 'http') {
    return createHttpProvider({ url: settings.url, token: settings.token, timeoutMs: settings.timeoutMs });
  }
  return createBuiltinProvider(database);
}
