// Free-form JSON that clients send (event metadata, a catalog entry's schema and metadata, an audit record's metadata)
// is bounded: at most 32 levels deep and 10,000 members, and a size per field (shared/core/schemas/input-rules.ts
// boundedJson). Past a bound it is 400 naming the field, and nothing is stored; at the bound it is accepted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { DeviceIdentity } from '#agent/identity.ts';
import { col, queryRows } from '#shared/core/db/query.ts';
import { JSON_LIMITS } from '#shared/core/schemas/input-rules.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

/** An object `levels` deep: {a: {a: … {a: 1}}}. */
const nested = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
};
const wide = (members: number) => Object.fromEntries(Array.from({ length: members }, (_, i) => [`k${i}`, i]));

for (const driver of driversUnderTest()) {
  describe(`bounded JSON on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let identity: DeviceIdentity;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      admin = await svc.adminToken();
      identity = await enrolledDevice(svc.url, admin);
    });
    after(async () => svc?.dispose());

    const count = async (table: 'observability_events' | 'catalog_entries' | 'audit_logs') =>
      (
        await queryRows(
          svc.runtime.database.db,
          sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`,
          { n: col.number },
        )
      )[0]!.n;

    test('event metadata: 500 levels deep is 400 naming events[0].metadata; 32 levels is stored', async () => {
      const stored = await count('observability_events');
      for (const metadata of [nested(500), nested(JSON_LIMITS.depth + 1), wide(JSON_LIMITS.members + 1)]) {
        const res = await send(
          svc.url,
          prepare('/v1/devices/events', identity, { events: [invocationEvent({ metadata })] }),
        );
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.match(
          String(res.body.message),
          /body\.events\[0\]\.metadata: (nests more than 32 levels|holds more than 10000 members)/,
        );
      }
      assert.equal(await count('observability_events'), stored, 'nothing stored');
      const ok = await send(
        svc.url,
        prepare('/v1/devices/events', identity, {
          events: [invocationEvent({ metadata: nested(JSON_LIMITS.depth) })],
        }),
      );
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(await count('observability_events'), stored + 1);
    });

    test('catalog schema and metadata, audit record metadata: depth and size bounds, named', async () => {
      const catalog = await count('catalog_entries');
      const audit = await count('audit_logs');
      const base = { datasource_id: 'ds', datasource_name: 'demo', target_name: 'orders' };
      const cases: Array<[string, unknown, RegExp]> = [
        ['/v1/admin/catalog', { ...base, schema: nested(100) }, /^body\.schema: nests more than 32 levels/],
        [
          '/v1/admin/catalog',
          { ...base, metadata: nested(40) },
          /^body\.metadata: nests more than 32 levels/,
        ],
        [
          '/v1/admin/catalog',
          { ...base, metadata: { blob: 'x'.repeat(300_000) } },
          /^body\.metadata: is larger than 262144 bytes/,
        ],
        [
          '/v1/admin/audit-logs',
          { records: [{ action_type: 'a', timestamp: new Date().toISOString(), metadata: nested(33) }] },
          /records\[0\] \(index 0; 1 of 1 invalid\)\. body\.records\[0\]\.metadata: nests more than 32 levels/,
        ],
      ];
      for (const [path, body, message] of cases) {
        const res = await svc.call('POST', path, { token: admin, body });
        assert.equal(res.status, 400, res.text);
        assert.match(String(res.body.message), message);
      }
      assert.equal(await count('catalog_entries'), catalog);
      assert.equal(await count('audit_logs'), audit);
      const created = await svc.call('POST', '/v1/admin/catalog', {
        token: admin,
        body: { ...base, schema: nested(32) },
      });
      assert.equal(created.status, 201, created.text);
      const id = (created.body.data as { id: string }).id;
      const patched = await svc.call('PATCH', `/v1/admin/catalog/${id}`, {
        token: admin,
        body: { metadata: nested(33) },
      });
      assert.equal(patched.status, 400);
      assert.match(String(patched.body.message), /^body\.metadata: nests more than 32 levels/);
    });
  });
}
