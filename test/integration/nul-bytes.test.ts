// U+0000 is refused at the edge (shared/http/validation.ts parsePart): PostgreSQL text and jsonb cannot hold it, so
// before this rule a NUL in a string was a 500 from the database. Every field of every route is sent a NUL, one at a
// time, in the body, the query and the path, as the OpenAPI document describes them: each answer is 400 naming the
// field, except the query of the two admin lists whose spec lists no 400, where such a filter matches nothing. No
// answer is a 5xx, and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { DeviceIdentity } from '#shared/agent/identity.ts';
import { queryRows } from '#shared/db/query.ts';
import { buildOpenApi } from '#shared/openapi.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  'x-auth': string;
  parameters?: Array<{ name: string; in: 'query' | 'path' | 'header'; schema: Schema }>;
  requestBody?: { content: { 'application/json': { schema: Schema } } };
}
const document = buildOpenApi() as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const NUL = 'a\u0000b';

const resolve = (schema: Schema): Schema => {
  const ref = schema.$ref as string | undefined;
  return ref ? resolve(document.components.schemas[ref.split('/').pop() as string] as Schema) : schema;
};

/** Every path in a body schema that can hold a string, as the key path to it ([] is the body itself). */
function stringPaths(schema: Schema, path: PropertyKey[] = [], depth = 0): PropertyKey[][] {
  const s = resolve(schema);
  if (depth > 6) return [];
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return branches.flatMap((b) => stringPaths(b, path, depth + 1)).slice(0, 40);
  const type = s.type;
  if (type === 'object' || s.properties) {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const own = Object.entries(properties).flatMap(([key, p]) => stringPaths(p, [...path, key], depth + 1));
    // An open record (metadata): a member of its own.
    return s.additionalProperties && typeof s.additionalProperties === 'object'
      ? [...own, [...path, 'note']]
      : own;
  }
  if (type === 'array') return stringPaths((s.items ?? {}) as Schema, [...path, 0], depth + 1);
  if (type === 'string' || type === undefined || (Array.isArray(type) && type.includes('string')))
    return [path];
  return [];
}

/** A body that holds NUL at `path` and nothing else. */
function bodyWith(path: PropertyKey[]): unknown {
  let value: unknown = NUL;
  for (const key of [...path].reverse())
    value = typeof key === 'number' ? [value] : { [key as string]: value };
  return value;
}

const fieldText = (part: string, path: PropertyKey[]) =>
  part + path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');

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
        await queryRows<{ n: number }>(
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
      for (const [template, methods] of Object.entries(document.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          const token = op['x-auth'] === 'public' || op['x-auth'] === 'device' ? undefined : admin;
          const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path');
          const concrete = (nul?: string) =>
            template.replace(/\{(\w+)\}/g, (_, name: string) =>
              name === nul ? encodeURIComponent(NUL) : '00000000-0000-4000-8000-000000000000',
            );
          const lenient = !Object.keys(
            (document.paths[template]?.[method] as unknown as { responses: object }).responses,
          ).includes('400');
          const cases: Array<{ field: string; path: string; body?: unknown; expect: number }> = [];
          for (const p of pathParams)
            cases.push({ field: `path.${p.name}`, path: concrete(p.name), expect: 400 });
          for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
            cases.push({
              field: `query.${p.name}`,
              path: `${concrete()}?${p.name}=${encodeURIComponent(NUL)}`,
              expect: lenient ? 200 : 400,
            });
          }
          const schema = op.requestBody?.content['application/json'].schema;
          const device = template.startsWith('/v1/devices') || template.startsWith('/devices');
          for (const path of schema ? stringPaths(schema) : []) {
            if (!path.length) continue;
            // The signed envelope of a device request (certificate, time, signature) is the signature's business:
            // a request whose envelope is not the device's own is 401 before anything about its body.
            if (device && ['certificate', 'clientTimestamp', 'signature'].includes(String(path[0]))) continue;
            cases.push({
              field: fieldText('body', path),
              path: concrete(),
              body: bodyWith(path),
              expect: 400,
            });
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
              : await svc.call(method.toUpperCase(), c.path, {
                  token,
                  ...(c.body === undefined ? {} : { body: c.body }),
                });
            const message = String(res.body.message ?? '');
            const where = `${method.toUpperCase()} ${template} ${c.field}: ${res.status} ${message.slice(0, 160)}`;
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
      }
      assert.deepEqual(wrong, []);
      assert.ok(sent > 100, `${sent} requests`);
      assert.equal(Number(await stored()), before, 'a refused request stores nothing');
    });
  });
}
