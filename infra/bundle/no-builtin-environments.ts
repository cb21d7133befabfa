// Stands in for shared/requests/environments/builtin/provider.ts where shared/requests/environments.ts imports it
// (a plugin of infra/bundle/split.ts), in the bundles of a deployment whose config says envsvc.provider = "http":
// providerFor and querierFor then build the client of the external environment service, so the builtin provider
// (views, roles, a session per driver) is left out; what other modules import directly from environments/builtin/
// stays. Reaching this means the function runs with another config than the stack was built from, said loudly.
import type { EnvironmentProvider, EnvironmentQuerier } from '../../shared/requests/environments/types.ts';

const unavailable = (): never => {
  throw new Error(
    'the builtin environment provider is not bundled: this function was built for envsvc.provider = "http" ' +
      '(infra/bundling.ts); synthesize the stack from the config the function runs with',
  );
};

export const createBuiltinProvider = (): EnvironmentProvider => unavailable();
export const createBuiltinQuerier = (): EnvironmentQuerier => unavailable();
