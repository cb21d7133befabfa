// Stands in for 'smol-toml' inside the Lambda bundles (an esbuild alias, infra/bundling.ts). The stack bundles each
// function's config as JSON (config.json, infra/stack.ts), which loadConfig reads with JSON.parse; the TOML parser
// (~11 KB) is only for TOML files, which a function never reads. Reaching this is a bundling mistake, said loudly.
export const parse = (): never => {
  throw new Error('TOML is not bundled into this function: its config is config.json (see infra/stack.ts)');
};
