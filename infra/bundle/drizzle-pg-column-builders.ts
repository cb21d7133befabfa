// Stands in for drizzle's `pg-core/columns/all.js` where `pgTable` imports it (a plugin of infra/bundle/split.ts,
// see INTERNAL_STUBS in infra/bundling.ts). It hands every PostgreSQL column type (geometry, vector, point, line,
// inet…) to the callback form of a table's columns, `pgTable('t', (t) => ({ … }))`; shared/core/db/schema.ts gives its
// columns as an object, so only the column types it imports are bundled. pgTable runs when the schema module loads,
// so the callback form would fail at once, in every bundle test.
export function getPgColumnBuilders(): never {
  throw new Error(
    "pgTable's callback form of columns is not bundled: give the columns as an object (see infra/bundling.ts)",
  );
}
