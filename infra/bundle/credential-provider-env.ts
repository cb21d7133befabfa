// Stands in for @aws-sdk/credential-provider-node inside the Lambda bundles (an esbuild alias, infra/bundling.ts).
// Lambda hands every function its role's credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN (so do `sam local` and the tests), which is the first link of the SDK's default chain. The other
// links (INI files, SSO, login, credential_process, web identity, ECS/IMDS) and the STS/SSO/OIDC clients they
// carry are never reached in Lambda; leaving them out takes ~90 KB of every bundle.
import { type FromEnvInit, fromEnv } from '@aws-sdk/credential-provider-env';

interface Expiring {
  expiration?: Date;
}

export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);

// Same contract as the real package's exports (the SDK's identity cache asks these).
export const credentialsWillNeedRefresh = (credentials?: Expiring) => credentials?.expiration !== undefined;
export const credentialsTreatedAsExpired = (credentials?: Expiring) =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;
