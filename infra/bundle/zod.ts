// Stands in for 'zod' inside the Lambda bundles (an esbuild alias, infra/bundling.ts). Imported as
// `{ z } from 'zod'`, a namespace used as a value cannot be tree-shaken: every export of zod's `external.js`
// lands in each bundle, including `z.locales` (about 40 languages, 258 KB minified, of which Lambda uses English,
// the default zod installs itself), `z.core`, `fromJSONSchema` and `deepPartial`. This namespace is the same API
// without them. (The service now imports `* as z from 'zod'`, which tree-shakes member by member, so this is a
// guard.) test/infra/zod-shim.test.ts checks that every `z.<member>` the code uses is here.
import * as z from './zod-api.ts';

export * from './zod-api.ts';
export { z, z as default };
