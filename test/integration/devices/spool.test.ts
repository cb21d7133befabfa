// The agent's spool counters (docs/device-protocol.md, "Spool counters"): an events batch may carry the agent's
// cumulative counts of events it could not deliver; the device row keeps the last report and the admin's device
// view shows it. Counters are checked like every field (400 naming it, nothing stored); an agent that sends none is
// still accepted, and its device shows none.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { DeviceIdentity } from '#agent/identity.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

for (const driver of driversUnderTest()) {
  describe(`spool counters on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let identity: DeviceIdentity;
    let deviceId: string;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      admin = await svc.adminToken();
      identity = await enrolledDevice(svc.url, admin);
      const first = await send(
        svc.url,
        prepare('/v1/devices/events', identity, { events: [invocationEvent()] }),
      );
      assert.equal(first.status, 200, JSON.stringify(first.body));
      deviceId = first.body.deviceId as string;
    });
    after(async () => svc?.dispose());

    const view = async () => {
      const res = await svc.call('GET', `/v1/admin/devices/${deviceId}`, { token: admin });
      assert.equal(res.status, 200, res.text);
      return (res.body.data as { spool: unknown }).spool as {
        dropped: number;
        torn: number;
        refused: number;
        reported_at: string;
      } | null;
    };
    const batch = (spool: unknown) =>
      send(svc.url, prepare('/v1/devices/events', identity, { events: [invocationEvent()], spool }));

    test('none reported: the device view says null', async () => {
      assert.equal(await view(), null);
    });

    test('reported with a batch: kept on the device and shown; the same counters again change nothing', async () => {
      const res = await batch({ dropped: 120, torn: 1, refused: 3 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.accepted, 1, 'the events of the batch are stored as ever');
      const shown = await view();
      assert.deepEqual(
        { ...shown, reported_at: undefined },
        { dropped: 120, torn: 1, refused: 3, reported_at: undefined },
      );
      assert.equal(shown?.reported_at, res.body.receivedAt);

      const again = await batch({ dropped: 120, torn: 1, refused: 3 });
      assert.equal(again.status, 200);
      assert.equal((await view())?.reported_at, shown?.reported_at, 'unchanged counters are not rewritten');

      const later = await batch({ dropped: 150, torn: 1 });
      assert.equal(later.status, 200);
      assert.deepEqual(
        { ...(await view()), reported_at: undefined },
        {
          dropped: 150,
          torn: 1,
          refused: 0,
          reported_at: undefined,
        },
      );
    });

    test('a bad counter is 400 naming it, and nothing of the batch is stored', async () => {
      const count = async () =>
        (
          await queryRows(
            svc.runtime.database.db,
            sql`SELECT count(*)::int AS n FROM observability_events WHERE device_id = ${deviceId}::uuid`,
          )
        )[0]!.n;
      const before = await count();
      for (const [spool, field] of [
        [{ dropped: -1, torn: 0 }, 'body.spool.dropped'],
        [{ dropped: 1.5, torn: 0 }, 'body.spool.dropped'],
        [{ dropped: 0 }, 'body.spool.torn'],
        [{ dropped: 0, torn: '2' }, 'body.spool.torn'],
      ] as const) {
        const res = await batch(spool);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.error, 'validation_failed');
        assert.match(String(res.body.message), new RegExp(`^${field.replace(/\./g, '\\.')}: `));
      }
      assert.equal(await count(), before);
    });
  });
}
