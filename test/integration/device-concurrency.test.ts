// 20 agents send batches at once on a real PostgreSQL, and retry some of them (re-signed, same event_ids, as the
// protocol tells a retrying agent to): afterwards stored events = distinct event_ids sent; none lost, none doubled.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createDeviceIdentity } from '#shared/agent/identity.ts';
import { queryRows } from '#shared/db/query.ts';
import { testDatabaseUrl } from '#test/support/databases.ts';
import { hardware, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

describe('concurrent ingest on postgres', () => {
  if (!testDatabaseUrl()) return; // needs a server with real concurrency; CI sets TEST_DATABASE_URL
  let svc: TestService;
  before(async () => {
    // Registering needs a dashboard URL (without one no new device can register): set it here whatever the
    // config file says.
    svc = await startTestService('postgres', { dashboard_url: 'http://dashboard.test' });
  });
  after(async () => svc?.dispose());

  test('20 agents, 5 batches of 100 each, 2 batches of each retried concurrently', async () => {
    const token = await svc.adminToken();
    const agents = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const identity = await createDeviceIdentity(i % 2 ? 'ed25519' : 'p256');
        const res = await send(svc.url, prepare('/v1/devices/register', identity, hardware(), { token }));
        assert.equal(res.status, 201);
        const batches = Array.from({ length: 5 }, () => Array.from({ length: 100 }, () => invocationEvent()));
        return { identity, batches };
      }),
    );
    const sends = agents.flatMap(({ identity, batches }) => [
      ...batches.map((events) => ({ identity, events })),
      { identity, events: batches[0] as unknown[] },
      { identity, events: batches[3] as unknown[] },
    ]);
    const results = await Promise.all(
      sends.map(({ identity, events }) => send(svc.url, prepare('/v1/devices/events', identity, { events }))),
    );
    assert.ok(
      results.every((r) => r.status === 200),
      JSON.stringify(results.find((r) => r.status !== 200)),
    );
    const accepted = results.reduce((n, r) => n + Number(r.body.accepted), 0);
    const duplicates = results.reduce((n, r) => n + Number(r.body.duplicates), 0);
    const [row] = await queryRows<{ total: number; distinct_ids: number }>(
      svc.runtime.database.db,
      sql`SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct_ids FROM observability_events`,
    );
    assert.equal(row?.total, 20 * 5 * 100);
    assert.equal(row?.distinct_ids, 20 * 5 * 100);
    assert.equal(accepted, 10_000);
    assert.equal(duplicates, 20 * 2 * 100);
  });
});
