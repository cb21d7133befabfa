// The input rules of the API contract (docs/api.md, "Requests" and "Errors"), through HTTP on every driver:
// - a null in an optional member of any body (events, inventory, every route's body) is the member left out;
// - every 400 validation_failed names its field (body.…, query.…, path.…) and what was expected, and a batch names
//   its first invalid item. The sweep walks the route table, so a new route is covered without editing this file.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import * as z from 'zod';
import { createDeviceIdentity, type DeviceIdentity } from '#agent/identity.ts';
import { queryRows } from '#shared/core/db/query.ts';
import type { RouteSpec } from '#shared/core/http/route.ts';
import { fieldName, type RequestPart } from '#shared/core/http/validation.ts';
import { routeList } from '#shared/routes.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { hardware, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const DASHBOARD = 'http://dashboard.test';
/** The routes whose spec lists no 400: they refuse no query value (test/integration/core/spec-statuses.test.ts). */
const LENIENT = new Set(['listAdminRequests', 'listAuditLogs']);
/** Members of signed device bodies that authenticate the request: a bad one is 401, before validation. */
const SIGNED = new Set(['certificate', 'clientTimestamp', 'signature']);

const BODY_CANDIDATES: unknown[] = [12345, 'not valid', true, {}, []];
const TEXT_CANDIDATES = ['not valid ☃', '', '-1', 'x'.repeat(400)];
/** An empty path segment does not reach the route at all. */
const PATH_CANDIDATES = TEXT_CANDIDATES.filter((t) => t !== '');
const VALID_PARAMS = ['00000000-0000-4000-8000-000000000000', '1', 'x'];

/** The members of an object schema, in order (through its JSON Schema, which sees past wrappers). */
const membersOf = (schema: z.ZodType): string[] =>
  Object.keys(
    (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: object }).properties ??
      {},
  );

/**
 * One invalid value for one member of `schema`, chosen so that the member's problem is the first one reported:
 * the first member (in schema order) for which some candidate is refused with its first issue on that member.
 */
function invalidMember(
  schema: z.ZodType,
  valid: Record<string, unknown>,
  candidates: readonly unknown[],
  skip: ReadonlySet<string> = new Set(),
): { key: string; input: Record<string, unknown> } | undefined {
  for (const key of membersOf(schema)) {
    if (skip.has(key)) continue;
    for (const candidate of candidates) {
      const input = { ...valid, [key]: candidate };
      const result = schema.safeParse(input);
      if (!result.success && result.error.issues[0]?.path[0] === key) return { key, input };
    }
  }
  return undefined;
}

/** Path parameters that pass the route's schema. */
function validParams(route: RouteSpec): Record<string, string> {
  const params: Record<string, string> = {};
  for (const key of route.params ? membersOf(route.params) : []) {
    const value = VALID_PARAMS.find(
      (v) => route.params?.safeParse({ ...params, [key]: v }).success !== false,
    );
    params[key] = value ?? 'x';
  }
  return params;
}

const pathOf = (route: RouteSpec, params: Record<string, unknown>) =>
  route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));

for (const driver of driversUnderTest()) {
  describe(`input rules on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let ana: string;
    let device: DeviceIdentity;

    const stored = async <_T>(query: ReturnType<typeof sql>) => queryRows(svc.runtime.database.db, query);

    before(async () => {
      svc = await startTestService(driver, { dashboard_url: DASHBOARD });
      admin = await svc.adminToken();
      const password = 'a long enough password';
      const user = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        // Nulls in optional members: the defaults apply (name '', roles ['user']).
        body: { email: 'ana@example.test', password, name: null, roles: null },
      });
      assert.equal(user.status, 201, user.text);
      assert.deepEqual(
        [(user.body.data as { name: string }).name, (user.body.data as { roles: string[] }).roles],
        ['', ['user']],
      );
      const login = await svc.call('POST', '/v1/auth/login', {
        body: { email: 'ana@example.test', password },
      });
      ana = (login.body.data as { access_token: string }).access_token;
      device = await createDeviceIdentity('p256');
      const registered = await send(
        svc.url,
        prepare('/v1/devices/register', device, { ...hardware(), ownerEmail: null }, { token: admin }),
      );
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
    });
    after(async () => svc?.dispose());

    test('events: a signed batch with nulls in optional fields is accepted; the stored events have them absent', async () => {
      const id = randomUUID();
      const nulls = {
        deny_code: null,
        deny_reason: null,
        error_message: null,
        rule_applied: null,
        model: null,
        session_id: null,
        group: null,
        actor_email: null,
        tokens_in: null,
        tokens_out: null,
        duration_ms: null,
        skills: null,
        prompt: null,
        metadata: null,
      };
      const events = [
        invocationEvent({ event_id: id, ...nulls }),
        invocationEvent({ event_id: null, model: 'claude-sonnet-4', metadata: { kept: null } }),
      ];
      // The reference agent's bytes (canonical, nulls included) and another spelling: both verify as signed.
      for (const wire of ['canonical', 'pretty'] as const) {
        const res = await send(svc.url, prepare('/v1/devices/events', device, { events }, { wire }));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual([res.body.accepted, res.body.duplicates], wire === 'canonical' ? [2, 0] : [1, 1]);
      }
      const [row] = await stored<Record<string, unknown>>(
        sql`SELECT model, session_id, group_name, actor_email, deny_code, prompt, prompt_truncated, tokens_in,
                   tokens_out, duration_ms, skills, metadata
            FROM observability_events WHERE event_id = ${id}::uuid`,
      );
      assert.deepEqual(
        [row?.model, row?.session_id, row?.group_name, row?.actor_email, row?.deny_code, row?.prompt],
        [null, null, null, null, null, null],
      );
      assert.deepEqual(
        [row?.prompt_truncated, Number(row?.tokens_in), Number(row?.tokens_out), Number(row?.duration_ms)],
        [false, 0, 0, 0],
      );
      const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
      assert.deepEqual([json(row?.skills), json(row?.metadata)], [[], {}]);
      const [kept] = await stored<{ metadata: unknown }>(
        sql`SELECT metadata FROM observability_events WHERE model = 'claude-sonnet-4' AND event_id IS NULL`,
      );
      assert.deepEqual(json(kept?.metadata), { kept: null }, 'a null inside metadata is data');

      // A null in a required field is still refused, naming the event.
      const before = await stored<{ n: number }>(sql`SELECT count(*)::int AS n FROM observability_events`);
      const bad = await send(
        svc.url,
        prepare('/v1/devices/events', device, {
          events: [invocationEvent(), invocationEvent({ tool: null }), invocationEvent({ result: 'denied' })],
        }),
      );
      assert.deepEqual([bad.status, bad.body.error], [400, 'validation_failed']);
      const message = String(bad.body.message);
      assert.match(
        message,
        /^The first invalid item of events is events\[1\] \(index 1; 2 of 3 invalid\)\. /,
      );
      assert.match(message, /body\.events\[1\]\.tool: expected string, received null/);
      assert.match(message, /body\.events\[2\]\.deny_code: is required when result = denied/);
      const afterBad = await stored<{ n: number }>(sql`SELECT count(*)::int AS n FROM observability_events`);
      assert.equal(Number(afterBad[0]?.n), Number(before[0]?.n), 'nothing stored');
    });

    test('inventory: nulls in optional members of agents[] and mcps[] entries are left out', async () => {
      const res = await send(
        svc.url,
        prepare('/v1/devices/inventory', device, {
          agents: [
            { agentType: 'claude-code', displayName: null, mcps: null },
            {
              agentType: 'cursor',
              displayName: 'Cursor',
              mcps: [{ name: 'github', enabled: true, transport: 'http', command: null, env: null }],
            },
          ],
        }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual([res.body.agentsIn, res.body.mcpsIn], [2, 1]);
      const [agent] = await stored<{ display_name: string }>(
        sql`SELECT display_name FROM inventory_agents WHERE agent_type = 'claude-code'`,
      );
      assert.equal(agent?.display_name, '');
      const bad = await send(
        svc.url,
        prepare('/v1/devices/inventory', device, {
          agents: [{ agentType: 'x', mcps: [{ name: 'a', enabled: null, transport: 'http' }] }],
        }),
      );
      assert.equal(bad.status, 400);
      assert.match(
        String(bad.body.message),
        /body\.agents\[0\]\.mcps\[0\]\.enabled: expected boolean, received null/,
      );
    });

    test('request bodies: nulls in optional members, at any depth, are left out', async () => {
      const created = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: {
          title: 'EU orders',
          description: null,
          risk_level: null,
          valid_until: null,
          external_ticket_id: null,
          external_ticket_url: null,
          request_template: null,
          scope: {
            credentials: null,
            datasources: [
              {
                credential_ref: null,
                datasets: [
                  {
                    namespace: 'eu',
                    source: { kind: 'postgres', name: 'demo', table: 'orders', uri: null, version: null },
                    columns: ['id', 'customers.country'],
                    filters: {
                      logic: null,
                      conditions: [{ condition: { column: 'total', op: 'is_null', value: null } }],
                    },
                    joins: [
                      {
                        namespace: 'customers',
                        on: 'orders.customer_id = customers.id',
                        source: { kind: 'postgres', name: 'demo', table: 'customers' },
                        type: null,
                      },
                    ],
                  },
                ],
              },
            ],
          },
        },
      });
      assert.equal(created.status, 201, created.text);
      const request = created.body.data as Record<string, unknown> & {
        id: string;
        scope: { datasources: Array<{ datasets: Array<Record<string, unknown>> }> };
      };
      assert.deepEqual(
        [request.description, request.risk_level, request.request_template],
        ['', 'low', null],
      );
      assert.ok(request.valid_until, 'the default validity applied');
      const dataset = request.scope.datasources[0]?.datasets[0] as {
        filters: { logic: string; conditions: Array<{ condition: Record<string, unknown> }> };
        joins: Array<{ type: string }>;
        source: Record<string, unknown>;
      };
      assert.equal(dataset.filters.logic, 'and');
      assert.equal('value' in (dataset.filters.conditions[0]?.condition ?? {}), false);
      assert.equal(dataset.joins[0]?.type, 'inner');
      assert.deepEqual(dataset.source, { kind: 'postgres', name: 'demo', table: 'orders' });
      // Required members still refuse null; the transitions' optional members take it.
      const deny = await svc.call('POST', `/v1/admin/requests/${request.id}/deny`, {
        token: admin,
        body: { reason: null },
      });
      assert.deepEqual(
        [deny.status, deny.body.message],
        [400, 'body.reason: expected string, received null'],
      );
      const approved = await svc.call('POST', `/v1/admin/requests/${request.id}/approve`, {
        token: admin,
        body: { notes: null },
      });
      assert.equal(approved.status, 200, approved.text);
      assert.equal((approved.body.data as { approval_notes: string | null }).approval_notes, null);
    });

    test('every route with a body, query or path schema answers 400 naming the field of one invalid value', async () => {
      const probed: string[] = [];
      const unprobed: string[] = [];
      const wrong: string[] = [];
      for (const [id, route] of routeList) {
        const parts = (['path', 'query', 'body'] as const).filter(
          (part) => ({ path: route.params, query: route.query, body: route.body })[part],
        );
        for (const part of parts) {
          if (part === 'query' && LENIENT.has(id)) continue;
          const params = validParams(route);
          const bad =
            part === 'path'
              ? invalidMember(route.params as z.ZodType, params, PATH_CANDIDATES)
              : part === 'query'
                ? invalidMember(route.query as z.ZodType, {}, TEXT_CANDIDATES)
                : invalidMember(
                    route.body as z.ZodType,
                    // A device body carries its certificate and timestamp (prepare() sets them when it signs).
                    route.auth.startsWith('device')
                      ? { certificate: device.certificatePem, clientTimestamp: new Date().toISOString() }
                      : {},
                    BODY_CANDIDATES,
                    SIGNED,
                  );
          if (!bad) {
            unprobed.push(`${id} ${part}`);
            continue;
          }
          const path =
            pathOf(route, part === 'path' ? bad.input : params) +
            (part === 'query' ? `?${new URLSearchParams(bad.input as Record<string, string>)}` : '');
          const token = route.auth === 'admin' ? admin : route.auth === 'user' ? ana : undefined;
          let res: { status: number; body: Record<string, unknown> };
          if (route.auth === 'device' || route.auth === 'device+user') {
            res = await send(
              svc.url,
              prepare(path, device, part === 'body' ? bad.input : {}, {
                token: route.auth === 'device+user' ? admin : undefined,
              }),
            );
          } else {
            res = await svc.call(route.method, path, {
              token,
              body: part === 'body' ? bad.input : route.body && route.method !== 'GET' ? {} : undefined,
            });
          }
          const field = fieldName(part as RequestPart, [bad.key]);
          const message = String(res.body.message);
          probed.push(`${id} ${field}`);
          if (
            res.status !== 400 ||
            res.body.error !== 'validation_failed' ||
            !message.includes(`${field}: `)
          ) {
            wrong.push(
              `${route.method} ${path.slice(0, 80)} (${field}): ${res.status} ${JSON.stringify(res.body)}`,
            );
          } else if (/: (Invalid input|Invalid)(;|$)/.test(message)) {
            wrong.push(`${id} ${field}: the message does not say what was expected: ${message}`);
          }
        }
      }
      assert.deepEqual(wrong, []);
      assert.deepEqual(
        unprobed,
        [],
        'no candidate value is refused by these schemas: add one to the candidates',
      );
      assert.ok(probed.length >= 40, `probed ${probed.length}`);
    });

    test('audit-log ingest: the message gives the index of the first bad record', async () => {
      const record = (over: Record<string, unknown> = {}) => ({
        action_type: 'container.started',
        timestamp: '2026-11-23T22:00:00Z',
        ...over,
      });
      const res = await svc.call('POST', '/v1/admin/audit-logs', {
        token: admin,
        body: {
          records: [record(), record(), record({ timestamp: 'yesterday' }), record({ level: 'loud' })],
        },
      });
      assert.equal(res.status, 400);
      const message = String(res.body.message);
      assert.match(
        message,
        /^The first invalid item of records is records\[2\] \(index 2; 2 of 4 invalid\)\. /,
      );
      assert.match(message, /body\.records\[2\]\.timestamp: expected an RFC 3339 date-time/);
      assert.match(
        message,
        /body\.records\[3\]\.level: Invalid option: expected one of "info"\|"warn"\|"error"/,
      );
      // Nulls in a record's optional members are left out (the defaults apply).
      const ok = await svc.call('POST', '/v1/admin/audit-logs', {
        token: admin,
        body: { records: [record({ actor_email: null, metadata: null, level: null })] },
      });
      assert.equal(ok.status, 201, ok.text);
    });
  });
}
