// U+0000 is refused at the edge (shared/core/http/validation.ts parsePart): PostgreSQL text and jsonb cannot hold it, so
// before this rule a NUL in a string was a 500 from the database. Every field of every route is sent a NUL, one at a
// time, in the body, the query and the path, as the OpenAPI document describes them: each answer is 400 naming the
// field, on the two admin lists whose spec lists no 400 too (they refuse no value, but a NUL is no text; it was a 200
// there, the filter matching nothing). No answer is a 5xx, and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { DeviceIdentity } from '#agent/identity.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { fieldText, isDeviceRoute, operations, stringPaths } from '#test/support/fuzz-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const NUL = 'a\u0000b';

/** A body that holds NUL at `path` and nothing else. */
function bodyWith(path: PropertyKey[]): unknown {
  let value: unknown = NUL;
  for (const key of [...path].reverse())
    value = typeof key === 'number' ? [value] : { [key as string]: value };
  return value;
}

for (const driver of driversUnderTest()) {
  describe(`U+0000 in every field on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let identity: DeviceIdentity;
    before(async () => {
      svc = await startTestService(driver, { dashboard_url: 'http://dashboard.test' });
      admin = await svc.adminToken();
      identity = await enrolledDevice(svc.url, admin);
    });
    after(async () => svc?.dispose());

    const stored = async () =>
      (
        await queryRows(
          svc.runtime.database.db,
          sql`SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM devices) + (SELECT count(*) FROM observability_events)
            + (SELECT count(*) FROM requests) + (SELECT count(*) FROM catalog_entries) + (SELECT count(*) FROM audit_logs)
            + (SELECT count(*) FROM inventory_agents) + (SELECT count(*) FROM cli_signins) AS n`,
        )
      )[0]!.n;

    test('400 naming the field, for every field of every route; nothing stored, no 5xx', async () => {
      const before = Number(await stored());
      const wrong: string[] = [];
      let sent = 0;
      for (const op of operations) {
        const { template, method } = op;
        const token = op.auth === 'public' || op.auth === 'device' ? undefined : admin;
        const pathParams = op.parameters.filter((p) => p.in === 'path');
        // Every other path parameter holds a value of its type, so that only the NUL is wrong.
        const valid = (name: string) => {
          const schema = pathParams.find((p) => p.name === name)?.schema as { type?: string } | undefined;
          return schema?.type === 'integer' || schema?.type === 'number'
            ? '1'
            : '00000000-0000-4000-8000-000000000000';
        };
        const concrete = (nul?: string) =>
          template.replace(/\{(\w+)\}/g, (_, name: string) =>
            name === nul ? encodeURIComponent(NUL) : valid(name),
          );
        const cases: Array<{ field: string; path: string; body?: unknown; expect: number }> = [];
        for (const p of pathParams)
          cases.push({ field: `path.${p.name}`, path: concrete(p.name), expect: 400 });
        for (const p of op.parameters.filter((q) => q.in === 'query')) {
          cases.push({
            field: `query.${p.name}`,
            path: `${concrete()}?${p.name}=${encodeURIComponent(NUL)}`,
            expect: 400,
          });
        }
        const device = isDeviceRoute(op);
        for (const path of op.body ? stringPaths(op.body) : []) {
          if (!path.length) continue;
          // The signed envelope of a device request (certificate, time, signature) is the signature's business:
          // a request whose envelope is not the device's own is 401 before anything about its body.
          if (device && ['certificate', 'clientTimestamp', 'signature'].includes(String(path[0]))) continue;
          cases.push({ field: fieldText('body', path), path: concrete(), body: bodyWith(path), expect: 400 });
        }
        for (const c of cases) {
          sent++;
          const res = device
            ? await send(
                svc.url,
                prepare(
                  c.path,
                  identity,
                  c.body as Record<string, unknown>,
                  template.endsWith('register') ? { token: admin } : {},
                ),
              )
            : await svc.call(method, c.path, {
                token,
                ...(c.body === undefined ? {} : { body: c.body }),
              });
          const message = String(res.body.message ?? '');
          const where = `${method} ${template} ${c.field}: ${res.status} ${message.slice(0, 160)}`;
          if (res.status >= 500) wrong.push(`${where} (a 5xx)`);
          else if (res.status !== c.expect) wrong.push(`${where} (expected ${c.expect})`);
          else if (
            c.expect === 400 &&
            !message.startsWith(`${c.field}: must not contain the NUL character`)
          ) {
            wrong.push(`${where} (does not name the field)`);
          }
        }
      }
      assert.deepEqual(wrong, []);
      assert.ok(sent > 100, `${sent} requests`);
      assert.equal(Number(await stored()), before, 'a refused request stores nothing');
    });
  });
}
