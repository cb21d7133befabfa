// What infra/bundle/libpg-query.ts loads with `import()`: the two functions the service uses, imported by name so
// that the bundle leaves out the package's other entry points (deparse, fingerprint, normalize, scan, PL/pgSQL…);
// a module loaded by `import()` as a whole keeps every export.
export { loadModule, parseSync } from '../../node_modules/libpg-query/wasm/index.js';
