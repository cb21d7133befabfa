// Stands in for 'aws-jwt-verify' inside the Lambda bundles (an esbuild alias, infra/bundling.ts). The package's
// index also exports the Cognito and ALB verifiers, which it does not declare free of side effects, so they were
// bundled next to the generic OIDC verifier that shared/auth/idp-tokens.ts uses. This is the package narrowed to
// that one (the same pinned code; the path goes through node_modules because the alias also rewrites the package's
// own name). A named import it lacks fails the bundling ("No matching export").
export { JwtVerifier } from '../../node_modules/aws-jwt-verify/dist/esm/jwt-verifier.js';
