// Stands in for '@aws-sdk/client-secrets-manager' inside the Lambda bundles (an esbuild alias, infra/bundling.ts).
// shared/core/config/secrets.ts loads the client with `await import(...)`, and esbuild keeps every export of a module
// loaded that way: all ~25 commands with their schemas. The service reads secrets with GetSecretValue only, so this
// is the package narrowed to that (the same pinned code; the path goes through node_modules because the alias also
// rewrites the package's own name). test/infra/bundle-stubs.test.ts checks it offers what the code takes from it.
export {
  GetSecretValueCommand,
  SecretsManagerClient,
} from '../../node_modules/@aws-sdk/client-secrets-manager/dist-es/index.js';
