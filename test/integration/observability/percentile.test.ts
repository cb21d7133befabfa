// The sketch's SQL functions (shared/observability/duration-sketch.ts) on every driver: obs_sketch_percentiles gives what
// sketchPercentiles gives for random sparse sketches, ranks and caps (to the 0.001 ms both round to: PostgreSQL's
// power() and JavaScript's ** may differ in the last bits, and a half may round either way), nulls for an empty sketch; obs_sketch_add sums two sketches key by
// key; and observability_series_totals' generated percentiles follow their row's sketch on insert and on upsert, as
// the fold writes them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { SERIES_TOTALS_PERCENTILES } from '#shared/core/db/histogram.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryJson } from '#shared/core/db/query.ts';
import { type DurationSketch, sketchKey, sketchPercentiles } from '#shared/observability/duration-sketch.ts';
import { seriesTotalsUpsertSql } from '#shared/observability/rollups/rollups.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { runs } from '#test/support/runs.ts';
import { testConfig } from '#test/support/service.ts';

interface Case {
  sketch: DurationSketch;
  /** Ascending ranks. */
  ps: number[];
  dmax: number;
}

/** A sketch as the rollups hold it: a few keys (0 is 0 ms; a day is key sketchKey(86_400_000)), small or large counts. */
const sketchArb: fc.Arbitrary<DurationSketch> = fc
  .uniqueArray(
    fc.record({
      k: fc.integer({ min: 0, max: sketchKey(86_400_000) }),
      c: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 2_000_000 })),
    }),
    { selector: (e) => e.k, maxLength: 40 },
  )
  .map((pairs) => {
    const sorted = pairs.sort((a, b) => a.k - b.k);
    return sorted.length ? [sorted.map((p) => p.k), sorted.map((p) => p.c)] : null;
  });
const cases = fc.array(
  fc.record({
    sketch: sketchArb,
    ps: fc
      .array(fc.oneof(fc.constantFrom(0, 0.5, 0.95, 0.99, 1), fc.double({ min: 0, max: 1, noNaN: true })), {
        minLength: 1,
        maxLength: 4,
      })
      .map((ps) => ps.sort((a, b) => a - b)),
    dmax: fc.integer({ min: 0, max: 86_400_000 }),
  }),
  { minLength: 100, maxLength: 100 },
);

const expected = (c: Case) => sketchPercentiles(c.sketch, c.ps, c.dmax);
/** Equal to the last bits of a double. */
const close = (got: (number | null)[][], want: (number | null)[][], what: string) => {
  assert.equal(got.length, want.length);
  got.forEach((row, i) => {
    row.forEach((v, j) => {
      const w = want[i]?.[j] ?? null;
      assert.ok(
        v === w || (v !== null && w !== null && Math.abs(v - w) <= 0.0011),
        `${what} ${i}/${j}: ${v} vs ${w}`,
      );
    });
  });
};
/** An SQL integer[][] from a sketch sent as JSON text (the Data API takes no array parameter). */
const sketchSql = (x: string) =>
  `CASE WHEN ${x} IS NULL OR json_typeof(${x}) = 'null' THEN NULL ELSE ARRAY[
    ARRAY(SELECT v::int FROM json_array_elements_text(${x}->0) WITH ORDINALITY AS h(v, i) ORDER BY h.i),
    ARRAY(SELECT v::int FROM json_array_elements_text(${x}->1) WITH ORDINALITY AS h(v, i) ORDER BY h.i)] END`;

for (const driver of driversUnderTest()) {
  describe(`the duration sketch's SQL functions on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Awaited<ReturnType<typeof connectDatabase>>;
    const inSql = (list: Case[]) =>
      queryJson<(number | null)[][]>(
        database.db,
        sql`SELECT json_agg(obs_sketch_percentiles(${sql.raw(sketchSql("t.x->'sketch'"))},
            ARRAY(SELECT v::float8 FROM json_array_elements_text(t.x->'ps') WITH ORDINALITY AS r(v, i) ORDER BY r.i),
            (t.x->>'dmax')::int) ORDER BY t.n) AS j
          FROM json_array_elements(${JSON.stringify(list)}::json) WITH ORDINALITY AS t(x, n)`,
      );

    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      await migrate(database.db);
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    test('obs_sketch_percentiles: random sketches, ranks and caps give what sketchPercentiles gives', async () => {
      await fc.assert(
        fc.asyncProperty(cases, async (list) => close(await inSql(list), list.map(expected), 'case')),
        { numRuns: 10 },
      );
      const [empty] = await inSql([{ sketch: null, ps: [0.5, 0.95, 0.99], dmax: 10 }]);
      assert.deepEqual(empty, [null, null, null], 'an empty sketch has no percentile');
      // A rank whose fraction times a gap below 1 ms underflows a double (PostgreSQL raised it as an error).
      const tiny: Case = {
        sketch: [
          [30, 31],
          [1, 1],
        ],
        ps: [5e-324],
        dmax: 1000,
      };
      close(await inSql([tiny]), [expected(tiny)], 'a subnormal rank');
    });

    test('obs_sketch_add: counts summed per key, keys ascending; NULL is the empty sketch', async () => {
      await fc.assert(
        fc.asyncProperty(sketchArb, sketchArb, async (a, b) => {
          const got = await queryJson<number[][] | null>(
            database.db,
            sql`SELECT to_json(obs_sketch_add(${sql.raw(sketchSql('x.a'))}, ${sql.raw(sketchSql('x.b'))})) AS j
              FROM (SELECT ${JSON.stringify(a)}::json AS a, ${JSON.stringify(b)}::json AS b) x`,
          );
          const sum = new Map<number, number>();
          for (const s of [a, b]) {
            s?.[0].forEach((k, i) => {
              sum.set(k, (sum.get(k) ?? 0) + Number(s[1][i]));
            });
          }
          const keys = [...sum.keys()].sort((x, y) => x - y);
          assert.deepEqual(got, keys.length ? [keys, keys.map((k) => sum.get(k))] : null);
        }),
        { numRuns: runs(30) },
      );
    });

    test('observability_series_totals: the stored percentiles follow the sketch on insert and on upsert', async () => {
      const upsert = (calls: number, sketch: DurationSketch, dmax: number) =>
        database.db.execute(
          seriesTotalsUpsertSql(
            sql.raw(`(SELECT 'minute'::text AS grain, '2026-01-01T00:00:00Z'::timestamptz AS bucket,
              ${calls}::bigint AS calls, 0::bigint AS denied, 0::bigint AS errors, 0::bigint AS tokens_in,
              0::bigint AS tokens_out, ${dmax}::int AS duration_max,
              '{{${sketch?.[0].join(',')}},{${sketch?.[1].join(',')}}}'::integer[] AS duration_sketch)`),
          ),
        );
      const read = () =>
        queryJson<(number | null)[]>(
          database.db,
          sql`SELECT to_json(duration_percentiles) AS j FROM observability_series_totals
            WHERE grain = 'minute' AND bucket = '2026-01-01T00:00:00Z'`,
        );
      const pct = (sketch: DurationSketch, dmax: number) =>
        expected({ sketch, ps: [...SERIES_TOTALS_PERCENTILES], dmax });
      const first: DurationSketch = [
        [10, 40],
        [90, 10],
      ];
      await upsert(100, first, 5_000);
      close([await read()], [pct(first, 5_000)], 'insert');
      const merged: DurationSketch = [
        [10, 40, 50],
        [90, 10, 400],
      ];
      await upsert(400, [[50], [400]], 60_000);
      const after = await read();
      close([after], [pct(merged, 60_000)], 'upsert');
      assert.notDeepEqual(after, pct(first, 5_000), 'the added counts moved the percentiles');
    });
  });
}
