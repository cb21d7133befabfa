// The claim a delivery pass starts with (shared/exports/delivery/claim.ts), on every driver and on both cursor tables:
// a due cursor of an enabled destination is claimed once (an overlapping pass gets nothing), a disabled destination's
// or one the pass does not serve is left alone, and a cursor is due again after its pass only without a failure.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { col, queryRows } from '#shared/core/db/query.ts';
import { claimDue, dueAgain } from '#shared/exports/delivery/claim.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;

for (const driver of driversUnderTest()) {
  describe(`the delivery's claim on ${driver}`, () => {
    let svc: TestService;
    const ids = { lake: '', otel: '', off: '' };

    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      const admin = await svc.adminToken();
      const make = async (body: Json) => {
        const res = await svc.call('POST', '/v1/admin/exports/destinations', { token: admin, body });
        assert.equal(res.status, 200, res.text);
        return String((res.body.data as Json).id);
      };
      const lake = {
        bucket: 'aws-security-data-lake-eu-west-1-acptest',
        region: 'eu-west-1',
        account_id: '123456789012',
        sources: { apiActivity: 'acp_api_activity', userAccess: 'acp_user_access' },
      };
      ids.lake = await make({ kind: 'security_lake', name: 'lake', settings: lake });
      ids.otel = await make({
        kind: 'otlp_http',
        name: 'otel',
        settings: { endpoint: 'http://127.0.0.1:9' },
      });
      ids.off = await make({ kind: 'security_lake', name: 'off', settings: lake, enabled: false });
    });
    after(async () => svc?.dispose());

    const db = () => svc.runtime.database.db;
    const claimCalls = () =>
      claimDue(db(), svc.runtime.config, {
        table: 'export_cursors',
        where: sql`true`,
        set: sql`last_attempt_at = now()`,
        returning: sql`d.name`,
        shape: { name: col.text },
      });
    const claimClasses = () =>
      claimDue(db(), svc.runtime.config, {
        table: 'export_class_cursors',
        where: sql`d.settings->'sources'->>c.class_key IS NOT NULL`,
        returning: sql`d.name, c.class_key`,
        shape: { name: col.text, class_key: col.text },
      });
    const names = (rows: { name: string; class_key?: string }[]) =>
      rows.map((r) => (r.class_key ? `${r.name}/${r.class_key}` : r.name)).sort();

    test('each due cursor of an enabled destination once, for a lease past the pass', async () => {
      assert.deepEqual(names(await claimCalls()), ['lake', 'otel']);
      assert.deepEqual(names(await claimClasses()), ['lake/userAccess']);
      // An overlapping pass finds them taken.
      assert.deepEqual(await claimCalls(), []);
      assert.deepEqual(await claimClasses(), []);
      const [lease] = await queryRows(
        db(),
        sql`SELECT extract(epoch FROM next_attempt_at - now())::float8 AS s, last_attempt_at IS NOT NULL AS at
          FROM export_cursors WHERE destination_id = ${ids.lake}::uuid`,
        { s: col.number, at: col.bool },
      );
      const { time_budget, timeout } = svc.runtime.config.exports;
      const expected = (time_budget + 2 * timeout) / 1000;
      assert.ok(lease && lease.s > expected - 5 && lease.s <= expected, JSON.stringify(lease));
      assert.equal(lease?.at, true, 'the extra assignment');
    });

    test('due again after a pass without a failure; a failed cursor keeps its wait', async () => {
      await db().execute(
        sql`UPDATE export_cursors SET attempts = 1 WHERE destination_id = ${ids.otel}::uuid`,
      );
      await dueAgain(db(), 'export_cursors', sql`destination_id IN (${ids.lake}::uuid, ${ids.otel}::uuid)`);
      await dueAgain(db(), 'export_class_cursors', sql`destination_id = ${ids.lake}::uuid`);
      assert.deepEqual(names(await claimCalls()), ['lake']);
      assert.deepEqual(names(await claimClasses()), ['lake/userAccess']);
    });
  });
}
