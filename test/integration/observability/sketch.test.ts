// The summary's duration percentiles within 2 % of percentile_cont over the raw events, on every driver: seeded
// random durations of several shapes (uniform, lognormal, heavy tail, ties with zeros, a single value, values up to
// the longest accepted, a day) go through the ingest path, part of them folded into the rollups and part left in the tail a
// read adds; then the summary's p50 / p95 / p99 overall, per tool and per hourly bucket, and the same with each
// server's filter, are held to percentile_cont over the same events (test/support/exact-percentiles.ts). The seed
// is printed with any failure (SKETCH_SEED=<n> replays it).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rng } from '#agent/simulate.ts';
import { connectDatabase } from '#shared/core/db/connect.ts';
import type { Database, Db } from '#shared/core/db/database.ts';
import { migrate } from '#shared/core/db/migrate.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { ingestEvents } from '#shared/devices/events.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { foldRollups } from '#shared/observability/rollups/rollups.ts';
import { summaryQuery } from '#shared/observability/schemas.ts';
import { observabilitySummary } from '#shared/observability/summary/summary.ts';
import { driversUnderTest, type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { percentileErrors } from '#test/support/exact-percentiles.ts';
import { testConfig } from '#test/support/service.ts';
import { verifiedDevice } from '#test/support/verified-device.ts';

const HOUR = 3_600_000;
const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const SEED = Number(process.env.SKETCH_SEED ?? Date.now() % 1_000_000);
const BOUND = 0.02;
const MCPS = ['github', 'pg'] as const;
const TOOLS = ['read', 'write', 'query'] as const;
/** The longest duration an event may carry (a day). */
const LONGEST = 86_400_000;

/** A standard normal deviate (Box-Muller). */
const normal = (r: () => number) => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());

/** Duration shapes, each drawing integer milliseconds from a seeded generator. */
const SHAPES: Record<string, (r: () => number) => () => number> = {
  uniform: (r) => () => Math.floor(r() * 5_000),
  lognormal: (r) => () => Math.round(Math.exp(5 + 1.5 * normal(r))),
  'heavy tail': (r) => () => Math.min(LONGEST, Math.round(10 / (1 - r()) ** (1 / 1.1))),
  'ties and zeros': (r) => {
    const values = [0, 0, 1, 7, 250, 250, 3_000];
    return () => values[Math.floor(r() * values.length)] as number;
  },
  'a single value': (r) => {
    const value = [0, 1, 646, 28_699][Math.floor(r() * 4)] as number;
    return () => value;
  },
  'up to the longest accepted': (r) => () =>
    r() < 0.5 ? Math.floor(r() * 100) : LONGEST - Math.floor(r() * 1_000_000),
};

for (const driver of driversUnderTest()) {
  describe(`duration percentiles within 2 % of percentile_cont on ${driver}`, () => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    let db: Db;
    const config = testConfig({ events: { max_batch: 1000 } });

    before(async () => {
      provisioned = await provisionDatabase(driver);
      database = await connectDatabase(testConfig({ db: { dsn: provisioned.dsn } }));
      db = database.db;
      await migrate(db);
      await db.execute(sql`INSERT INTO devices (serial_number, brand, model, owner_subject, owner_email,
          certificate_fingerprint, certificate_pem, key_type, cert_not_before, cert_not_after)
        VALUES ('SKETCH-0', 'B', 'M', 'sub', 'o@x.test', 'fp-sketch', 'pem', 'p256', now(), now() + interval '1 day')`);
    });
    after(async () => {
      await database?.close();
      await provisioned?.cleanup();
    });

    const ingest = (events: ReturnType<typeof observabilityEvent.parse>[]) =>
      ingestEvents(db, config, verifiedDevice('fp-sketch'), events, '10.0.0.1');

    Object.entries(SHAPES).forEach(([shape, make], k) => {
      test(`${shape}: overall, per tool, per server and per hour (seed ${SEED})`, async () => {
        const r = rng(SEED * 31 + k);
        const draw = make(r);
        // Each shape has its own 6 hours, so that the cases do not mix.
        const from = NOW - (k + 1) * 7 * HOUR;
        const events = Array.from({ length: 600 }, () =>
          observabilityEvent.parse({
            event_id: randomUUID(),
            event_time: new Date(from + Math.floor(r() * 6 * HOUR)).toISOString(),
            agent_type: 'claude',
            mcp_name: MCPS[Math.floor(r() * MCPS.length)],
            tool: TOOLS[Math.floor(r() * TOOLS.length)],
            event_type: 'result',
            result: 'allowed',
            duration_ms: draw(),
          }),
        );
        // The first batches folded into the rollups, the last left in the tail that a read adds.
        for (let i = 0; i < events.length; i += 150) {
          await ingest(events.slice(i, i + 150));
          if (i < 300) await foldRollups(db, { maxEvents: 100_000, wait: true });
        }
        const [stored] = await queryRows(
          db,
          sql`SELECT count(*)::int AS n FROM observability_events
            WHERE event_time >= ${new Date(from).toISOString()}::timestamptz
              AND event_time < ${new Date(from + 6 * HOUR).toISOString()}::timestamptz`,
        );
        assert.equal(stored?.n, events.length, 'every event was stored');
        const range = { from: new Date(from).toISOString(), to: new Date(from + 6 * HOUR).toISOString() };
        for (const filters of [{}, ...MCPS.map((mcp) => ({ mcp }))] as { mcp?: string }[]) {
          for (const source of ['auto', 'raw'] as const) {
            const q = summaryQuery.parse({ ...range, ...filters, bucket: 'hour', top: 50 });
            const summary = await observabilitySummary(db, q, { now: new Date(NOW), source });
            const error = await percentileErrors(db, summary, filters.mcp);
            assert.ok(error.compared >= 3 * (1 + TOOLS.length), `compared ${error.compared}`);
            assert.ok(
              error.worst <= BOUND,
              `seed ${SEED} (SKETCH_SEED=${SEED} replays it), ${shape}, ${JSON.stringify(filters)}, ${source} (${JSON.stringify(summary.source)}): worst relative error ${error.worst} at ${error.where}`,
            );
          }
        }
      });
    });
  });
}
