// Stands in for shared/requests/environments/http.ts where shared/requests/environments.ts imports it (a plugin of
// infra/bundle/split.ts), in the bundles of a deployment whose config says envsvc.provider = "builtin": providerFor
// then builds the builtin provider and the probe checks no environment service, so the client of an external one is
// left out. Reaching this means the function runs with another config than the stack was built from, said loudly.
import type { EnvironmentProvider, EnvironmentQuerier } from '../../shared/requests/environments/types.ts';

const unavailable = (): never => {
  throw new Error(
    'the http environment provider is not bundled: this function was built for envsvc.provider = "builtin" ' +
      '(infra/bundling.ts); synthesize the stack from the config the function runs with',
  );
};

export const createHttpProvider = (): EnvironmentProvider => unavailable();
export const pingEnvironmentService = (): Promise<{ latency_ms: number }> => unavailable();
export const createHttpQuerier = (): EnvironmentQuerier => unavailable();
