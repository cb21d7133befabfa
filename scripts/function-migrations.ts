// SQL functions whose body is written in TypeScript (drizzle SQL fragments shared with other statements) and
// installed by a migration generated from that text: `npm run db:functions -- <name>` writes the migration when a
// function's text changed, and test/unit/core/db/function-migrations.test.ts fails while the newest migration that
// defines a function differs from its source. Migrations stay append-only (shared/core/db/migrate.ts): a change is a new
// file with CREATE OR REPLACE, never an edit of an applied one.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { SUM_AGGREGATE, sumAggregateSql } from '../shared/core/db/int8-sum.ts';
import { DEFAULT_MIGRATIONS_DIR, readMigrations } from '../shared/core/db/migrate.ts';
import { INGEST_FUNCTION, ingestFunctionSql } from '../shared/devices/events.ts';
import {
  SKETCH_ADD_FUNCTION,
  SKETCH_KEY_FUNCTION,
  SKETCH_PERCENTILES_FUNCTION,
  SKETCH_VALUE_FUNCTION,
  sketchAddFunctionSql,
  sketchKeyFunctionSql,
  sketchPercentilesFunctionSql,
  sketchValueFunctionSql,
} from '../shared/observability/duration-sketch.ts';
import {
  FLEET_FOLD_FUNCTION,
  FLEET_REBUILD_FUNCTION,
  fleetFoldFunctionSql,
  fleetRebuildFunctionSql,
} from '../shared/observability/fleet/stats.ts';
import {
  FOLD_FUNCTION,
  foldFunctionSql,
  READ_TAIL_FUNCTION,
  readTailFunctionSql,
} from '../shared/observability/rollups/rollups.ts';
import { SUMMARY_FUNCTION, summaryFunctionSql } from '../shared/observability/summary/summary.ts';

export interface GeneratedFunction {
  name: string;
  /** Where its source is, for the migration's header. */
  source: string;
  definition: () => SQL;
}

export const GENERATED_FUNCTIONS: readonly GeneratedFunction[] = [
  {
    name: INGEST_FUNCTION,
    source: 'shared/devices/events.ts (ingestFunctionSql)',
    definition: ingestFunctionSql,
  },
  {
    name: SKETCH_KEY_FUNCTION,
    source: 'shared/observability/duration-sketch.ts (sketchKeyFunctionSql)',
    definition: sketchKeyFunctionSql,
  },
  {
    name: SKETCH_VALUE_FUNCTION,
    source: 'shared/observability/duration-sketch.ts (sketchValueFunctionSql)',
    definition: sketchValueFunctionSql,
  },
  {
    name: SKETCH_ADD_FUNCTION,
    source: 'shared/observability/duration-sketch.ts (sketchAddFunctionSql)',
    definition: sketchAddFunctionSql,
  },
  {
    name: SKETCH_PERCENTILES_FUNCTION,
    source: 'shared/observability/duration-sketch.ts (sketchPercentilesFunctionSql)',
    definition: sketchPercentilesFunctionSql,
  },
  {
    name: FOLD_FUNCTION,
    source: 'shared/observability/rollups/rollups.ts (foldFunctionSql)',
    definition: foldFunctionSql,
  },
  {
    name: READ_TAIL_FUNCTION,
    source: 'shared/observability/rollups/rollups.ts (readTailFunctionSql)',
    definition: readTailFunctionSql,
  },
  {
    name: FLEET_FOLD_FUNCTION,
    source: 'shared/observability/fleet/stats.ts (fleetFoldFunctionSql)',
    definition: fleetFoldFunctionSql,
  },
  {
    name: FLEET_REBUILD_FUNCTION,
    source: 'shared/observability/fleet/stats.ts (fleetRebuildFunctionSql)',
    definition: fleetRebuildFunctionSql,
  },
  {
    name: SUM_AGGREGATE,
    source: 'shared/core/db/int8-sum.ts (sumAggregateSql)',
    definition: sumAggregateSql,
  },
  {
    name: SUMMARY_FUNCTION,
    source: 'shared/observability/summary/summary.ts (summaryFunctionSql)',
    definition: summaryFunctionSql,
  },
];

/** The CREATE OR REPLACE FUNCTION statement as it is written into a migration (no parameters allowed). */
export function renderFunction(fn: GeneratedFunction): string {
  const { sql, params } = new PgDialect().sqlToQuery(fn.definition());
  if (params.length > 0) throw new Error(`function ${fn.name} has bound parameters; use its arguments`);
  return `${sql};`;
}

const header = (fn: GeneratedFunction) =>
  `-- ${fn.name}: generated from ${fn.source} by \`npm run db:functions\`; do not edit.`;

// Applied migrations are never edited, so an older one names the source where it was then: any source will do.
const headerLine = (fn: GeneratedFunction) =>
  new RegExp(`^-- ${fn.name}: generated from .* by \`npm run db:functions\`; do not edit\\.\\n`);

/** The newest migration that defines `fn` and that definition (its statement without the header line). */
export function newestDefinition(fn: GeneratedFunction, dir = DEFAULT_MIGRATIONS_DIR) {
  const markers = [`FUNCTION ${fn.name}(`, `AGGREGATE ${fn.name}(`];
  return readMigrations(dir)
    .flatMap((m) =>
      m.statements
        .filter((s) => markers.some((marker) => s.includes(marker)))
        .map((s) => ({ name: m.name, definition: s.replace(headerLine(fn), '') })),
    )
    .at(-1);
}

/** Whether the newest migration defining `fn` holds exactly its current text. */
export const isCurrent = (fn: GeneratedFunction, dir = DEFAULT_MIGRATIONS_DIR): boolean =>
  newestDefinition(fn, dir)?.definition === renderFunction(fn);

/**
 * Writes one migration (NNNN_<name>.sql, and its entry in drizzle-kit's journal) redefining every function whose
 * text changed; returns its file name, or undefined when all are current.
 */
export function writeFunctionMigration(
  name: string,
  dir = DEFAULT_MIGRATIONS_DIR,
  functions: readonly GeneratedFunction[] = GENERATED_FUNCTIONS,
): string | undefined {
  const stale = functions.filter((fn) => !isCurrent(fn, dir));
  if (stale.length === 0) return undefined;
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error('name the migration with lowercase letters, digits and _');
  const journalPath = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
    entries: Array<{ idx: number; version: string; when: number; tag: string; breakpoints: boolean }>;
  };
  // After the newest file, not the count of files: numbers skipped on the way (two branches renumbered) stay free.
  const idx = Math.max(-1, ...readMigrations(dir).map((m) => Number.parseInt(m.name, 10))) + 1;
  const tag = `${String(idx).padStart(4, '0')}_${name}`;
  const body = stale.map((fn) => `${header(fn)}\n${renderFunction(fn)}`).join('\n--> statement-breakpoint\n');
  writeFileSync(join(dir, `${tag}.sql`), `${body}\n`);
  const last = journal.entries.at(-1);
  journal.entries.push({
    idx,
    version: last?.version ?? '7',
    when: Math.max(Date.now(), (last?.when ?? 0) + 1),
    tag,
    breakpoints: true,
  });
  writeFileSync(journalPath, `${JSON.stringify(journal, null, 2)}\n`);
  return `${tag}.sql`;
}
