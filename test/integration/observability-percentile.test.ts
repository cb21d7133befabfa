// obs_hist_percentiles (the SQL twin of histPercentile, shared/domain/observability-rollups.ts) on every driver: for
// random histograms, ascending ranks and caps it gives what histPercentile gives for each rank, including the empty
// histogram (nulls) and ranks that fall exactly on a bucket's last count; and observability_series_totals' generated
// percentiles follow their row's histogram when a row is inserted and when an upsert adds to it, as the fold does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { connectDatabase } from '#shared/db/connect.ts';
import { SERIES_TOTALS_PERCENTILES } from '#shared/db/histogram.ts';
import { migrate } from '#shared/db/migrate.ts';
import { queryJson } from '#shared/db/query.ts';
import { HIST_BUCKETS, histPercentile, seriesTotalsUpsertSql } from '#shared/domain/observability-rollups.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

interface Case {
  hist: (number | null)[];
  /** Ascending ranks. */
  ps: number[];
  dmax: number;
}

/** A histogram as the rollups hold it: mostly empty (NULL) buckets, a few counts, now and then a large one. */
const histogram = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 5 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2_000_000 }) },
  ),
  { minLength: HIST_BUCKETS, maxLength: HIST_BUCKETS },
);
const rank = fc.oneof(
  fc.constantFrom(0.5, 0.95, 0.99, 1),
  fc.double({ min: 0.000_001, max: 1, noNaN: true }),
);
const cases = fc.array(
  fc.record({
    hist: histogram,
    ps: fc.array(rank, { minLength: 1, maxLength: 4 }).map((ps) => ps.sort((a, b) => a - b)),
    dmax: fc.integer({ min: 0, max: 2_000_000 }),
  }),
  { minLength: 200, maxLength: 200 },
);

const expected = (c: Case) =>
  c.ps.map((p) =>
    histPercentile(
      c.hist.map((n) => n ?? 0),
      p,
      c.dmax,
    ),
  );

for (const driver of driversUnderTest()) {
  describe(`obs_hist_percentiles on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Awaited<ReturnType<typeof connectDatabase>>;
    /** obs_hist_percentiles of each case, in one statement. */
    const inSql = (list: Case[]) =>
      queryJson<(number | null)[][]>(
        database.db,
        sql`SELECT json_agg(obs_hist_percentiles(
            ARRAY(SELECT v::int FROM json_array_elements_text(t.x->'hist') WITH ORDINALITY AS h(v, i) ORDER BY h.i),
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

    test('random histograms, ranks and caps: what histPercentile gives', async () => {
      await fc.assert(
        fc.asyncProperty(cases, async (list) => {
          assert.deepEqual(await inSql(list), list.map(expected));
        }),
        { numRuns: 10 },
      );
    });

    test('empty, every bucket alone, and ranks on the last count of a bucket', async () => {
      const empty = Array<number | null>(HIST_BUCKETS).fill(null);
      const list: Case[] = [
        { hist: empty, ps: [0.5, 0.95, 0.99], dmax: 10 },
        { hist: empty.map(() => 0), ps: [0.99], dmax: 0 },
      ];
      for (let b = 0; b < HIST_BUCKETS; b++) {
        // Each bucket alone, capped above and below its upper bound.
        for (const dmax of [0, 1, 2_000_000]) {
          list.push({ hist: empty.map((_, i) => (i === b ? 3 : null)), ps: [0.5, 0.95, 0.99], dmax });
        }
        // 20 counts over two buckets: p95's rank 19 is the first bucket's last count, one more moves it; p99 and
        // p100 fall in the second bucket, two ranks read in the same step of the walk.
        for (const first of [19, 18]) {
          list.push({
            hist: empty.map((_, i) => (i === b ? first : i === (b + 1) % HIST_BUCKETS ? 20 - first : null)),
            ps: [0.5, 0.95, 0.99, 1],
            dmax: 2_000_000,
          });
        }
      }
      const got = await inSql(list);
      assert.deepEqual(got, list.map(expected));
      assert.deepEqual(got[0], [null, null, null], 'an empty histogram has no percentile');
    });

    test('observability_series_totals: the stored percentiles follow the histogram on insert and on upsert', async () => {
      // Series rows of one minute, upserted as the fold upserts them (seriesTotalsUpsertSql).
      const upsert = (calls: number, hist: (number | null)[], dmax: number) =>
        database.db.execute(
          seriesTotalsUpsertSql(
            sql.raw(`(SELECT 'minute'::text AS grain, '2026-01-01T00:00:00Z'::timestamptz AS bucket,
              ${calls}::bigint AS calls, 0::bigint AS denied, 0::bigint AS errors, 0::bigint AS tokens_in,
              0::bigint AS tokens_out, ${dmax}::int AS duration_max,
              ${hist.map((n, i) => `${n ?? 'NULL'}::int AS h${i + 1}`).join(', ')})`),
          ),
        );
      const read = () =>
        queryJson<(number | null)[]>(
          database.db,
          sql`SELECT to_json(duration_percentiles) AS j FROM observability_series_totals
            WHERE grain = 'minute' AND bucket = '2026-01-01T00:00:00Z'`,
        );
      const pct = (hist: (number | null)[], dmax: number) =>
        expected({ hist, ps: [...SERIES_TOTALS_PERCENTILES], dmax });
      const first = Array.from({ length: HIST_BUCKETS }, (_, i) => (i === 10 ? 90 : i === 40 ? 10 : null));
      await upsert(100, first, 5_000);
      assert.deepEqual(await read(), pct(first, 5_000));
      // The upsert adds counts bucket by bucket; the percentiles are recomputed from the sums.
      const more = Array.from({ length: HIST_BUCKETS }, (_, i) => (i === 50 ? 400 : null));
      await upsert(400, more, 60_000);
      const sum = first.map((n, i) => (n ?? 0) + (more[i] ?? 0) || null);
      const after = await read();
      assert.deepEqual(after, pct(sum, 60_000));
      assert.notDeepEqual(after, pct(first, 5_000), 'the added counts moved the percentiles');
    });
  });
}
