// Stands in for shared/core/auth/idp-tokens.ts where shared/core/auth/authenticate.ts imports it (a plugin of
// infra/bundle/split.ts), in the bundles of a deployment whose config says auth.provider = "local": authenticate()
// refuses every token that is not a valid local one before it would ask the IdP (local mode requires a ≥ 32-byte
// secret), so the OIDC verifier (aws-jwt-verify, ~14 KB) is left out. Reaching this means the function runs with
// another config than the stack was built from: logged as an error (authenticate() answers 401 for it), and thrown.
import type { Principal } from '../../shared/core/auth/principal.ts';
import { rootLogger } from '../../shared/core/logger.ts';

const MESSAGE =
  'IdP tokens are not checked by this bundle: it was built for auth.provider = "local" (infra/bundling.ts); ' +
  'synthesize the stack from the config the function runs with';

export function verifyIdpToken(): Promise<Principal> {
  rootLogger.error(MESSAGE);
  throw new Error(MESSAGE);
}
