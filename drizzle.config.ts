import { defineConfig } from 'drizzle-kit';

// Generates SQL migrations from the drizzle schema (shared/core/db/schema.ts and shared/observability/tables.ts) into migrations/
// (`npm run db:generate`). migrations/meta holds drizzle-kit's snapshot of the schema as of the latest migration, so a
// generate writes only what changed since.
// The service applies them with its own migrator (shared/core/db/migrate.ts) on PGlite, node-postgres and the Data API.
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./shared/core/db/schema.ts', './shared/observability/tables.ts'],
  out: './migrations',
});
