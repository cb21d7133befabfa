// A local start (npm start) seeds the demo datasource when environments are builtin, once, so that a newcomer can walk
// create → approve → query → revoke right away (README). Tests start the service without it unless they ask.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { LocalService } from '#local-server/service.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { createLogger } from '#shared/core/logger.ts';
import { type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { startCheckedService, testConfig } from '#test/support/service.ts';

const catalog = async (service: LocalService) =>
  queryRows(
    service.runtime.database.db,
    sql`SELECT target_name AS target, (SELECT count(*)::int FROM demo.orders) AS n
        FROM catalog_entries WHERE datasource_name = 'demo' ORDER BY target_name`,
  );

describe('demo datasource on a local start', () => {
  // One PGlite directory, started several times.
  let database: ProvisionedDatabase;
  before(async () => {
    database = await provisionDatabase('pglite');
  });
  after(() => database?.cleanup());
  const start = async (options: { demoData?: boolean; provider?: 'builtin' | 'http' } = {}) =>
    (
      await startCheckedService({
        config: testConfig({
          db: { dsn: database.dsn },
          envsvc:
            options.provider === 'http'
              ? { provider: 'http', url: 'http://127.0.0.1:1' }
              : { provider: 'builtin' },
        }),
        log: createLogger({ test: true }),
        ...(options.demoData === undefined ? {} : { demoData: options.demoData }),
      })
    ).service;

  test('not seeded by default outside npm start, nor with the http provider', async () => {
    for (const service of [await start(), await start({ demoData: true, provider: 'http' })]) {
      const [{ n }] = (await queryRows(
        service.runtime.database.db,
        sql`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'demo'`,
      )) as [{ n: number }];
      await service.stop();
      assert.equal(n, 0);
    }
  });

  test('seeded on start, and starting again adds nothing', async () => {
    const first = await start({ demoData: true });
    const seeded = await catalog(first);
    await first.stop();
    assert.deepEqual(
      seeded.map((r) => r.target),
      ['customers', 'orders', 'products'],
    );
    assert.equal(seeded[0]?.n, 600);
    const again = await start({ demoData: true });
    const after = await catalog(again);
    await again.stop();
    assert.deepEqual(after, seeded);
  });
});
