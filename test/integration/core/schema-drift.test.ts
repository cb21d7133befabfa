// The drizzle schema (typed queries) and the SQL migrations (what the databases hold) must describe the same tables:
// migrations are partly hand-written (functions, partial indexes, observability tables), so drift between the two is
// possible and would surface only as a runtime error on some route. And drizzle-kit's snapshot in migrations/meta must
// match the drizzle schema, so that `npm run db:generate` writes only the next change, never the whole schema again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database } from '#shared/core/db/database.ts';
import { col, queryRows as rows } from '#shared/core/db/query.ts';
import * as schema from '#shared/core/db/schema.ts';
import * as observabilitySchema from '#shared/observability/tables.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const exported: unknown[] = [...Object.values(schema), ...Object.values(observabilitySchema)];
const tables = exported.filter((value: unknown): value is PgTable => is(value, PgTable));

/** Type names as pg's format_type() prints them. */
function pgType(declared: string): string {
  const t = declared.toLowerCase();
  if (t === 'serial') return 'integer';
  if (t === 'bigserial') return 'bigint';
  return t;
}

for (const kind of driversUnderTest().filter((k) => k !== 'data-api')) {
  describe(`schema: drizzle declarations match the migrated database on ${kind}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    before(async () => {
      provisioned = await provisionDatabase(kind);
      database = await connectDatabase({
        db: {
          dsn: provisioned.dsn,
          max_open_conns: 1,
          max_idle_conns: 0,
          max_idle_time: 1,
          statement_timeout: 30_000,
          resume_wait: 20_000,
        },
      });
      const { migrate } = await import('#shared/core/db/migrate.ts');
      await migrate(database.db);
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    test('every declared table exists with the declared columns, types, nullability and primary key', async () => {
      assert.ok(tables.length >= 15, `found ${tables.length} drizzle tables`);
      for (const table of tables) {
        const config = getTableConfig(table);
        const actual = await rows(
          database.db,
          sql`SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null
              FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public' AND c.relname = ${config.name} AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum`,
          { name: col.text, type: col.text, not_null: col.bool },
        );
        assert.ok(
          actual.length > 0,
          `table ${config.name} is declared in drizzle but no migration creates it`,
        );
        const byName = new Map(actual.map((c) => [c.name, c]));
        for (const column of config.columns) {
          const found = byName.get(column.name);
          assert.ok(found, `${config.name}.${column.name} is declared but not in the database`);
          assert.equal(found.type, pgType(column.getSQLType()), `${config.name}.${column.name} type`);
          const declaredNotNull = column.notNull || column.primary;
          assert.equal(found.not_null, declaredNotNull, `${config.name}.${column.name} NOT NULL`);
        }
        const declared = new Set(config.columns.map((c) => c.name));
        const undeclared = actual.filter((c) => !declared.has(c.name)).map((c) => c.name);
        assert.deepEqual(undeclared, [], `${config.name} has columns drizzle does not declare`);

        const pk = await rows(
          database.db,
          sql`SELECT a.attname AS name FROM pg_index i
              JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey)
              WHERE n.nspname = 'public' AND c.relname = ${config.name} AND i.indisprimary ORDER BY a.attname`,
          { name: col.text },
        );
        const declaredPk = [
          ...config.columns.filter((c) => c.primary).map((c) => c.name),
          ...config.primaryKeys.flatMap((k) => k.columns.map((c) => c.name)),
        ].sort();
        assert.deepEqual(
          pk.map((r) => r.name),
          declaredPk,
          `${config.name} primary key`,
        );
      }
    });
  });
}

test('drizzle-kit snapshot matches the drizzle schema: db:generate finds nothing to write', () => {
  const work = mkdtempSync(join(tmpdir(), 'acp-drizzle-kit-'));
  try {
    for (const entry of ['package.json', 'tsconfig.json', 'drizzle.config.ts', 'shared', 'migrations']) {
      cpSync(join(ROOT, entry), join(work, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
    const before = readdirSync(join(work, 'migrations')).sort();
    const output = execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/drizzle-kit/bin.cjs'), 'generate'],
      {
        cwd: work,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    assert.match(output, /No schema changes/, output);
    assert.deepEqual(readdirSync(join(work, 'migrations')).sort(), before);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
