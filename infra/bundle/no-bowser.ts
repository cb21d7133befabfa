// Stands in for 'bowser' inside the Lambda bundles (an esbuild alias, infra/bundling.ts). The SDK's browser
// user-agent provider (@aws-sdk/core, util-user-agent-browser) imports this browser user-agent parser with
// `import()`; that provider never runs in Node, but code splitting still emits the parser as a chunk of its own
// (~34 KB in every function). Reaching this is a bundling mistake, said loudly.
const unavailable = (): never => {
  throw new Error(
    'bowser (browser user-agent parsing) is not bundled into this function (see infra/bundling.ts)',
  );
};

export const parse = unavailable;
export default { parse };
