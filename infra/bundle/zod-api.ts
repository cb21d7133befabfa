// The members of zod's `v4/classic/external.js` that Lambda code can use, minus `locales`, `core`, `fromJSONSchema`
// and `deepPartial` (see infra/bundle/zod.ts). Paths go through node_modules on purpose: the 'zod' alias also
// rewrites `zod/...` subpaths, and these files are zod's own ESM build, so the behaviour is zod's.
export * from '../../node_modules/zod/v4/classic/checks.js';
export * as coerce from '../../node_modules/zod/v4/classic/coerce.js';
export * from '../../node_modules/zod/v4/classic/compat.js';
export * from '../../node_modules/zod/v4/classic/errors.js';
export { input, output } from '../../node_modules/zod/v4/classic/in-out.js';
export * as iso from '../../node_modules/zod/v4/classic/iso.js';
export {
  ZodISODate,
  ZodISODateTime,
  ZodISODuration,
  ZodISOTime,
} from '../../node_modules/zod/v4/classic/iso.js';
export * from '../../node_modules/zod/v4/classic/parse.js';
export * from '../../node_modules/zod/v4/classic/schemas.js';
export {
  $brand,
  $input,
  $output,
  clone,
  config,
  flattenError,
  formatError,
  globalRegistry,
  NEVER,
  prettifyError,
  regexes,
  registry,
  TimePrecision,
  treeifyError,
  util,
} from '../../node_modules/zod/v4/core/index.js';
export { toJSONSchema } from '../../node_modules/zod/v4/core/json-schema-processors.js';
