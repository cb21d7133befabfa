// Stands in for zod's `core/to-json-schema.js` where zod's schema classes import it (a plugin of
// infra/bundle/split.ts, see INTERNAL_STUBS in infra/bundling.ts): the `schema.toJSONSchema()` method and the
// Standard Schema `~standard.jsonSchema` functions, which the service never calls (GET /v1/openapi.json uses
// `z.toJSONSchema`, which imports the real module itself). Creating them stays harmless (`~standard` builds them
// eagerly); calling one is a bundling mistake, said loudly.
const unavailable = (): never => {
  throw new Error(
    'schema.toJSONSchema() is not bundled into this function: use z.toJSONSchema (see infra/bundling.ts)',
  );
};

export const createToJSONSchemaMethod = () => unavailable;
export const createStandardJSONSchemaMethod = () => unavailable;
