// A migrated database of one driver for the describe block that asks for it: provisioned, connected and migrated in
// its `before`, closed and removed in its `after`.
import { after, before } from 'node:test';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { type DriverKind, type ProvisionedDatabase, provisionDatabase } from './databases.ts';
import { testConfig } from './service.ts';

/** Registers the block's hooks; read `db` in its tests (it throws before the `before` hook has run). */
export function migratedDatabase(driver: DriverKind): { readonly db: Db } {
  let provisioned: ProvisionedDatabase | undefined;
  let database: Database | undefined;
  before(async () => {
    provisioned = await provisionDatabase(driver);
    database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
    await migrate(database.db);
  });
  after(async () => {
    await database?.close();
    await provisioned?.cleanup();
  });
  return {
    get db() {
      if (!database) throw new Error('the database is ready in the before hook');
      return database.db;
    },
  };
}
