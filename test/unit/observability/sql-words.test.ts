// lit() writes its argument into SQL unparameterized, so it takes only the words of a closed table: the type refuses
// any other string at compile time (typecheck compiles the @ts-expect-error lines) and the function at run time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PgDialect } from 'drizzle-orm/pg-core';
import { lit, type SqlWord } from '#shared/observability/conditions.ts';
import type { Grain } from '#shared/observability/rollups/rollups.ts';

const text = (word: SqlWord) => new PgDialect().sqlToQuery(lit(word));

// Every grain is a word: a grain added to the rollups without a word here fails to compile.
const everyGrain: Record<Exclude<Grain, SqlWord>, never> = {};
void everyGrain;

test('lit writes a known word as a literal, without parameters', () => {
  for (const word of ['hour', '6h', 'week', 'call', 'actor', 'models_total'] as const) {
    assert.deepEqual(text(word), { sql: `'${word}'`, params: [] });
  }
});

test('lit refuses any other string, at compile time and at run time', () => {
  const injected: string = "hour' OR TRUE --";
  // @ts-expect-error a plain string is not an SqlWord
  assert.throws(() => lit(injected), TypeError);
  // @ts-expect-error nor is a literal outside the table
  assert.throws(() => lit('month'), /not a known SQL word: "month"/);
  assert.throws(() => lit(injected as SqlWord), /not a known SQL word/);
});
