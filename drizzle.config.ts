import { defineConfig } from 'drizzle-kit';

// Generates SQL migrations from shared/db/schema.ts into migrations/ (`npm run db:generate`).
// The service applies them with its own migrator (shared/db/migrate.ts) on PGlite, node-postgres and the Data API.
export default defineConfig({
  dialect: 'postgresql',
  schema: './shared/db/schema.ts',
  out: './migrations',
});
