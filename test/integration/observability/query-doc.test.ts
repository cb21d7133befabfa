// queryDoc (shared/observability/bounds.ts) on every driver: a JSON document read in chunks of the document's
// UTF-8 bytes comes back whole, with characters of 2, 3 and 4 bytes placed across every chunk boundary, at sizes
// around one chunk and over several, and a NULL document is null.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { connectDatabase } from '#shared/core/db/connect.ts';
import { queryDoc } from '#shared/observability/bounds.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

/** The chunk size queryDoc cuts at (bytes); the test places characters around its multiples. */
const CHUNK = 60_000;
/** `{"s" : "` : the bytes json_build_object writes before the string. */
const PREFIX = 8;

for (const driver of driversUnderTest()) {
  describe(`queryDoc on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Awaited<ReturnType<typeof connectDatabase>>;
    const read = (s: string) =>
      queryDoc<{ s: string } | null>(database.db, sql`SELECT json_build_object('s', ${s}::text) AS j`);

    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    test('a character of 2, 3 or 4 bytes starting on or just before a chunk boundary', async () => {
      for (const ch of ['é', '€', '😀']) {
        const bytes = Buffer.byteLength(ch);
        for (let before = 0; before <= bytes + 1; before++) {
          for (const boundary of [CHUNK, 2 * CHUNK]) {
            // The character starts `before` bytes ahead of the boundary; more text follows it.
            const s = `${'a'.repeat(boundary - PREFIX - before)}${ch}${'b'.repeat(10)}${ch}`;
            const doc = await read(s);
            assert.equal(doc?.s, s, `${ch} starting ${before} bytes before ${boundary}`);
          }
        }
      }
    });

    test('documents of one byte less, exactly and one byte more than a chunk, and of several chunks', async () => {
      for (const size of [CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 5 * CHUNK + 17]) {
        const s = 'x'.repeat(size - PREFIX - 2);
        const doc = await read(s);
        assert.equal(doc?.s, s, `${size} bytes`);
      }
      // Mixed characters of every width over several chunks.
      const alphabet = ['a', 'é', '€', '😀', '"', '\\', '\n'];
      let mixed = '';
      for (let i = 0; mixed.length < 200_000; i++) mixed += alphabet[(i * 7 + (i >> 3)) % alphabet.length];
      assert.equal((await read(mixed))?.s, mixed);
    });

    test('an empty document and a NULL one', async () => {
      assert.deepEqual(await read(''), { s: '' });
      assert.equal(await queryDoc(database.db, sql`SELECT NULL::json AS j`), null);
      assert.equal(await queryDoc(database.db, sql`SELECT '{}'::json AS j WHERE false`), null);
    });
  });
}
