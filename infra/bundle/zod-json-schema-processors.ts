// Stands in for zod's `core/json-schema-processors.js` where zod's schema classes import it (a plugin of
// infra/bundle/split.ts, see INTERNAL_STUBS in infra/bundling.ts). Every schema class wires its JSON Schema
// processor into each instance (`_zod.processJSONSchema`), so all of zod's JSON Schema generator (~18 KB) landed in
// every function, though only GET /v1/openapi.json generates JSON Schema, with `z.toJSONSchema`. That function hands
// the generator every processor, keyed by schema type (`allProcessors`, from the real module, which it imports
// itself); each class's processor is the one for its type, so an instance's processor here looks its type up there
// and runs the same code. Nothing else is left out: `aggregateChecks` (what `.minLength`, `.format`… read) is
// zod's own. test/infra/bundles.test.ts compares the bundled OpenAPI document with the one built from source.
import type { $ZodType } from '../../node_modules/zod/v4/core/schemas.js';
import type { Processor } from '../../node_modules/zod/v4/core/to-json-schema.js';

export { aggregateChecks } from '../../node_modules/zod/v4/core/json-schema-processors.js';

const byType: Processor = (schema: $ZodType, ctx, json, params) => {
  const processor = ctx.processors[schema._zod.def.type];
  if (!processor) {
    throw new Error(
      `JSON Schema of a zod ${schema._zod.def.type}: only z.toJSONSchema() is bundled (see infra/bundling.ts)`,
    );
  }
  processor(schema, ctx, json, params);
};

export const stringProcessor = byType;
export const numberProcessor = byType;
export const booleanProcessor = byType;
export const bigintProcessor = byType;
export const symbolProcessor = byType;
export const nullProcessor = byType;
export const undefinedProcessor = byType;
export const voidProcessor = byType;
export const neverProcessor = byType;
export const anyProcessor = byType;
export const unknownProcessor = byType;
export const dateProcessor = byType;
export const enumProcessor = byType;
export const literalProcessor = byType;
export const nanProcessor = byType;
export const templateLiteralProcessor = byType;
export const fileProcessor = byType;
export const successProcessor = byType;
export const customProcessor = byType;
export const functionProcessor = byType;
export const transformProcessor = byType;
export const mapProcessor = byType;
export const setProcessor = byType;
export const arrayProcessor = byType;
export const objectProcessor = byType;
export const unionProcessor = byType;
export const intersectionProcessor = byType;
export const tupleProcessor = byType;
export const recordProcessor = byType;
export const nullableProcessor = byType;
export const nonoptionalProcessor = byType;
export const defaultProcessor = byType;
export const prefaultProcessor = byType;
export const catchProcessor = byType;
export const pipeProcessor = byType;
export const readonlyProcessor = byType;
export const promiseProcessor = byType;
export const optionalProcessor = byType;
export const lazyProcessor = byType;
