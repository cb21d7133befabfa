// SQL functions written in TypeScript are installed by generated migrations (scripts/function-migrations.ts): the
// newest migration that defines each must hold its current text, or the databases run an older statement than the
// code reads.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'drizzle-orm';
import { DEFAULT_MIGRATIONS_DIR } from '#shared/core/db/migrate.ts';
import {
  GENERATED_FUNCTIONS,
  isCurrent,
  newestDefinition,
  renderFunction,
  writeFunctionMigration,
} from '../../../../scripts/function-migrations.ts';

test('the newest migration defining each generated function holds its current text', () => {
  assert.ok(GENERATED_FUNCTIONS.length >= 1);
  for (const fn of GENERATED_FUNCTIONS) {
    const newest = newestDefinition(fn);
    assert.ok(newest, `no migration defines ${fn.name}: run npm run db:functions -- <name>`);
    assert.ok(
      isCurrent(fn),
      `${newest.name} defines an older ${fn.name} than ${fn.source}: run npm run db:functions -- <name>`,
    );
  }
});

test('a changed function gets a new migration and a journal entry; the applied one is left as it was', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-fn-migrations-'));
  try {
    cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    const newest = files.at(-1) as string;
    const before = readFileSync(join(dir, newest), 'utf8');
    assert.equal(writeFunctionMigration('nothing_changed', dir), undefined);

    const [fn] = GENERATED_FUNCTIONS;
    assert.ok(fn);
    // The function as a developer's edit of its source leaves it: a different text.
    const changed = { ...fn, definition: () => sql`-- edited\n${fn.definition()}` };
    assert.equal(isCurrent(changed, dir), false);
    const written = writeFunctionMigration('ingest_changed', dir, [changed]);
    // Numbered after the newest file (numbers skipped on the way stay free).
    const next = Number.parseInt(newest, 10) + 1;
    assert.equal(written, `${String(next).padStart(4, '0')}_ingest_changed.sql`);
    assert.ok(readFileSync(join(dir, written), 'utf8').includes(renderFunction(changed)));
    assert.equal(isCurrent(changed, dir), true);
    assert.equal(isCurrent(fn, dir), false, 'the newest definition is now the changed one');
    const journal = JSON.parse(readFileSync(join(dir, 'meta', '_journal.json'), 'utf8')) as {
      entries: Array<{ idx: number; tag: string }>;
    };
    const entry = journal.entries.at(-1);
    assert.equal(entry?.idx, next);
    assert.equal(entry?.tag, written.replace(/\.sql$/, ''));
    assert.equal(readFileSync(join(dir, newest), 'utf8'), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Every function the migrations define, with the newest file that defines it. */
function liveDefinitions(dir = DEFAULT_MIGRATIONS_DIR): Map<string, string> {
  const live = new Map<string, string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(
      /CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|AGGREGATE)\s+"?([a-z_][a-z0-9_]*)"?/gi,
    )) {
      live.set(m[1]!.toLowerCase(), file);
    }
  }
  return live;
}

/** The rows of migrations/README.md's table: function name → the file it names as the live definition. */
function documentedDefinitions(): Map<string, string> {
  const readme = readFileSync(join(DEFAULT_MIGRATIONS_DIR, 'README.md'), 'utf8');
  const rows = [...readme.matchAll(/^\| `([a-z_][a-z0-9_]*)` \|[^|]*\| `(\d{4}_[a-z0-9_]+\.sql)` \|$/gm)];
  return new Map(rows.map((m) => [m[1]!, m[2]!]));
}

test('migrations/README.md names the newest migration defining every SQL function', () => {
  const live = liveDefinitions();
  assert.ok(live.size >= GENERATED_FUNCTIONS.length);
  const documented = documentedDefinitions();
  const wrong = [...live].filter(([fn, file]) => documented.get(fn) !== file);
  const stale = [...documented.keys()].filter((fn) => !live.has(fn));
  assert.deepEqual(
    [
      ...wrong.map(([fn, file]) => `${fn}: the live definition is ${file}`),
      ...stale.map((fn) => `${fn}: defined nowhere`),
    ],
    [],
    'update the table in migrations/README.md',
  );
});

test('the README check can fail: a function redefined by a newer migration is caught', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-fn-readme-'));
  try {
    cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
    const [fn] = GENERATED_FUNCTIONS;
    assert.ok(fn);
    const written = writeFunctionMigration('redefined', dir, [
      { ...fn, definition: () => sql`-- x\n${fn.definition()}` },
    ]);
    assert.equal(liveDefinitions(dir).get(fn.name), written);
    assert.notEqual(documentedDefinitions().get(fn.name), written);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
