// Stands in for shared/core/auth/caller.ts where shared/core/http/middleware/bearer-auth.ts loads it with `import()` (a plugin
// of infra/bundle/split.ts), in the bundles of functions none of whose route rows takes a bearer token (public and
// device-signed routes, see infra/route-tables.ts): the handler loads the authenticators only for such rows, but
// code splitting would still ship them (jose, the OIDC verifier and the users lookup). Reaching this is a bundling
// mistake, said loudly.
export function identifyCaller(): never {
  throw new Error('no route of this function takes a bearer token: its authenticators are not bundled');
}
