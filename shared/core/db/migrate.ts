import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db } from './database.ts';
import { col, queryRows } from './query.ts';

export const DEFAULT_MIGRATIONS_DIR = join(import.meta.dirname, '../../../migrations/');

export interface Migration {
  name: string;
  checksum: string;
  statements: string[];
}

/** Reads `NNNN_name.sql` files in order and splits them on drizzle-kit's breakpoints (one statement per call). */
export function readMigrations(dir: string = DEFAULT_MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8');
      return {
        name: file.replace(/\.sql$/, ''),
        checksum: createHash('sha256').update(text).digest('hex'),
        statements: text
          .split('--> statement-breakpoint')
          .map((s) => s.trim())
          .filter((s) => s.replace(/--.*$/gm, '').trim().length > 0),
      };
    });
}

// Any constant works; it only has to be the same for every process that migrates this database.
const MIGRATION_LOCK = 7_311_982_410;

/**
 * Applies pending migrations in one transaction, holding an advisory lock so that concurrent starters (two local
 * servers, a deploy trigger racing a cold start) apply each file once. An applied file whose text changed is an
 * error: migrations are append-only.
 */
export async function migrate(db: Db, dir?: string): Promise<{ applied: string[] }> {
  const migrations = readMigrations(dir);
  await db.execute(
    sql`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const done = await queryRows(tx, sql`SELECT name, checksum FROM schema_migrations`, {
      name: col.text,
      checksum: col.text,
    });
    const known = new Map(done.map((row) => [row.name, row.checksum]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const checksum = known.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(
            `migration ${migration.name} was changed after it was applied; add a new migration instead`,
          );
        }
        continue;
      }
      for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      await tx.execute(
        sql`INSERT INTO schema_migrations (name, checksum) VALUES (${migration.name}, ${migration.checksum})`,
      );
      applied.push(migration.name);
    }
    return { applied };
  });
}
