// obs_sum (shared/core/db/int8-sum.ts) on every driver: per group, the same value as PostgreSQL's sum() of the same
// random bigints, as a bigint; NULL where sum() gives NULL (no rows, only NULLs); and an error, never a wrapped value,
// past the largest bigint.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rng } from '#agent/simulate.ts';
import { SUM_AGGREGATE } from '#shared/core/db/int8-sum.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { migratedDatabase } from '#test/support/migrated-database.ts';

const SEED = Number(process.env.SUM_SEED ?? Date.now() % 1_000_000);
const SUM = sql.raw(SUM_AGGREGATE);

for (const driver of driversUnderTest()) {
  describe(`${SUM_AGGREGATE}(bigint) on ${driver}`, () => {
    const database = migratedDatabase(driver);

    test(`equals sum() per group over random bigints, NULLs among them (seed ${SEED})`, async () => {
      const r = rng(SEED);
      // Values up to 2^40 in 40 groups of up to 300: sums near 2^48, past what a 32-bit or float32 sum would hold.
      const values = Array.from({ length: 3_000 }, () => ({
        g: Math.floor(r() * 40),
        v: r() < 0.05 ? null : String(Math.floor(r() * 2 ** 40) - (r() < 0.2 ? 2 ** 39 : 0)),
      }));
      const rows = await queryRows(
        database.db,
        sql`SELECT x.g, ${SUM}(x.v)::text AS ours, sum(x.v)::text AS theirs,
            pg_typeof(${SUM}(x.v))::text AS type
          FROM json_to_recordset(${JSON.stringify(values)}::json) AS x(g int, v bigint)
          GROUP BY x.g ORDER BY x.g`,
        { g: col.number, ours: col.nullable(col.text), theirs: col.nullable(col.text), type: col.text },
      );
      assert.ok(rows.length >= 30, `${rows.length} groups`);
      for (const row of rows) {
        assert.equal(row.ours, row.theirs, `group ${row.g} (seed ${SEED})`);
        assert.equal(row.type, 'bigint');
      }
    });

    test('NULL for no rows and for only NULLs, as sum()', async () => {
      const [row] = await queryRows(
        database.db,
        sql`SELECT (SELECT ${SUM}(v) FROM (SELECT 1::bigint AS v WHERE false) e)::text AS none,
            (SELECT ${SUM}(v) FROM (VALUES (NULL::bigint), (NULL)) n(v))::text AS nulls,
            (SELECT sum(v) FROM (VALUES (NULL::bigint), (NULL)) n(v))::text AS sum_nulls`,
        { none: col.nullable(col.text), nulls: col.nullable(col.text), sum_nulls: col.nullable(col.text) },
      );
      assert.deepEqual(row, { none: null, nulls: null, sum_nulls: null });
    });

    test('a sum past the largest bigint is an error, not a wrapped value', async () => {
      await assert.rejects(
        queryRows(
          database.db,
          sql`SELECT ${SUM}(v)::text AS s FROM (VALUES (9223372036854775807::bigint), (1::bigint)) t(v)`,
          { s: col.nullable(col.text) },
        ),
        (err: Error) =>
          /out of range/i.test(`${err.message} ${String((err as { cause?: unknown }).cause ?? '')}`),
      );
    });
  });
}
