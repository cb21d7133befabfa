// Data-access requests, catalog and audit extras through HTTP, on every database driver under test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '#shared/core/db/query.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { randomSecret } from '#test/support/secrets.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

type Json = Record<string, unknown>;
interface RequestData {
  id: string;
  status: string;
  title: string;
  risk_level: string;
  created_at: string;
  approved_at: string | null;
  approved_by: string | null;
  approval_notes: string | null;
  denial_reason: string | null;
  valid_until: string | null;
  datasource_names: string[];
  requester: { id: string; name: string; email: string };
  scope: Json;
  tunnel: Json | null;
  usage_events: Json[];
  request_template: { id: string; name: string } | null;
}

export const sampleScope = {
  credentials: { refs: { warehouse: 'secret/warehouse' }, note: 'free-form' },
  datasources: [
    {
      credential_ref: 'warehouse',
      datasets: [
        {
          namespace: 'sales',
          source: { kind: 'postgres', name: 'demo', table: 'orders' },
          columns: ['id', 'customer_id', 'total', 'region'],
          filters: {
            logic: 'and',
            conditions: [
              { condition: { column: 'region', op: 'eq', value: 'EU' } },
              {
                group: {
                  logic: 'or',
                  conditions: [
                    { condition: { column: 'total', op: 'gt', value: 100 } },
                    { condition: { column: 'status', op: 'in', value: ['paid', 'shipped'] } },
                  ],
                },
              },
            ],
          },
          joins: [
            {
              namespace: 'customers',
              on: 'orders.customer_id = customers.id',
              source: { kind: 'postgres', name: 'demo', table: 'customers' },
              type: 'inner',
            },
          ],
        },
      ],
    },
  ],
};

/** The log shipper's service token (audit.ingest_token) of the services under test. */
const SHIPPER_TOKEN = randomSecret();

const newRequest = (overrides: Json = {}) => ({
  title: 'Quarterly EU sales analysis',
  description: 'Revenue by region',
  business_justification: 'Finance close',
  risk_level: 'medium',
  request_template: { id: 'tpl-1', name: 'Analytics read' },
  scope: sampleScope,
  ...overrides,
});
/** A request whose scope is one datasource with this one dataset. */
const withDataset = (dataset: Json) => newRequest({ scope: { datasources: [{ datasets: [dataset] }] } });

for (const driver of driversUnderTest()) {
  describe(`requests on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let adminId: string;
    let ana: string;
    let anaId: string;
    let bob: string;
    let admin2: string;

    const makeUser = async (email: string, roles: string[]) => {
      const password = 'a long enough password';
      const created = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, name: email.split('@')[0], password, roles },
      });
      assert.equal(created.status, 201, created.text);
      const login = await svc.call('POST', '/v1/auth/login', { body: { email, password } });
      const data = login.body.data as { access_token: string; user: { id: string } };
      return { token: data.access_token, id: data.user.id };
    };
    const create = async (token: string, body: Json = newRequest(), headers: Record<string, string> = {}) => {
      const res = await svc.call('POST', '/v1/requests', { token, body, headers });
      assert.equal(res.status, 201, res.text);
      return res.body.data as RequestData;
    };
    // Records of the API (people's moves); environment records (env-svc) are checked in requests-environments.
    const auditCount = async (resourceId: string) => {
      const res = await svc.call(
        'GET',
        `/v1/admin/audit-logs?resource_id=${resourceId}&source=api&limit=100`,
        {
          token: admin,
        },
      );
      return (res.body.data as { total: number }).total;
    };
    const auditActions = async (resourceId: string) => {
      const res = await svc.call(
        'GET',
        `/v1/admin/audit-logs?resource_id=${resourceId}&source=api&sort=created_at&limit=100`,
        { token: admin },
      );
      return (res.body.data as { logs: Array<{ action_type: string; source: string }> }).logs;
    };

    before(async () => {
      svc = await startTestService(driver, { audit: { ingest_token: SHIPPER_TOKEN } });
      admin = await svc.adminToken();
      const me = await svc.call('GET', '/v1/me', { token: admin });
      adminId = (me.body.data as { subject: string }).subject;
      ({ token: ana, id: anaId } = await makeUser('ana@example.test', ['user']));
      ({ token: bob } = await makeUser('bob@example.test', ['user']));
      ({ token: admin2 } = await makeUser('admin2@example.test', ['admin', 'user']));
    });
    after(async () => svc?.dispose());

    test('create: 201 pending with every field, the scope as sent, the requester from the token, audited', async () => {
      const res = await svc.call('POST', '/v1/requests', { token: ana, body: newRequest() });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.success, true);
      const r = res.body.data as RequestData;
      assert.equal(r.status, 'pending');
      assert.equal(r.risk_level, 'medium');
      assert.deepEqual(r.requester, { id: anaId, name: 'ana', email: 'ana@example.test' });
      assert.deepEqual(r.datasource_names, ['demo']);
      assert.deepEqual(r.request_template, { id: 'tpl-1', name: 'Analytics read' });
      // A join on another datasource names it too.
      const [dataset] = sampleScope.datasources[0]?.datasets ?? [];
      const crm = {
        ...dataset,
        joins: [{ ...dataset?.joins[0], source: { kind: 'postgres', name: 'crm', table: 'customers' } }],
      };
      const joined = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest({
          scope: { ...sampleScope, datasources: [{ ...sampleScope.datasources[0], datasets: [crm] }] },
        }),
      });
      assert.equal(joined.status, 201, joined.text);
      assert.deepEqual((joined.body.data as RequestData).datasource_names, ['demo', 'crm']);
      assert.deepEqual(r.scope, sampleScope);
      assert.equal(r.tunnel, null);
      assert.deepEqual(r.usage_events, []);
      assert.equal(r.approved_at, null);
      const days = (Date.parse(String(r.valid_until)) - Date.now()) / 86_400_000;
      assert.ok(days > 29.9 && days <= 30, `default validity is 30 days, got ${days}`);
      for (const key of [
        'id',
        'title',
        'description',
        'business_justification',
        'status',
        'risk_level',
        'source',
        'created_at',
        'updated_at',
        'valid_until',
        'approved_at',
        'approved_by',
        'approval_notes',
        'denial_reason',
        'external_ticket_id',
        'external_ticket_url',
        'datasource_names',
        'environment_id',
        'environment_status',
        'request_template',
        'requester',
        'scope',
        'tunnel',
        'usage_events',
      ]) {
        assert.ok(key in r, `field ${key}`);
      }
      const logs = await auditActions(r.id);
      assert.deepEqual(
        logs.map((l) => l.action_type),
        ['request.created'],
      );
    });

    test('create: bad input is 400 naming the field; nothing is written', async () => {
      const cases: Array<[Json, RegExp]> = [
        [{ ...newRequest(), title: '' }, /title/],
        [{ ...newRequest(), scope: { datasources: [] } }, /datasources/],
        [{ ...newRequest(), risk_level: 'extreme' }, /risk_level/],
        [{ ...newRequest(), valid_until: '2001-01-01T00:00:00Z' }, /valid_until/],
        [
          { ...newRequest(), valid_until: new Date(Date.now() + 400 * 86_400_000).toISOString() },
          /valid_until/,
        ],
        [{ ...newRequest(), unknown_field: 1 }, /unknown_field|Unrecognized/],
        [
          withDataset({
            namespace: 'x',
            source: { kind: 'pg', name: 'demo' },
            columns: ['id; DROP TABLE users'],
          }),
          /columns/,
        ],
        [
          withDataset({
            namespace: 'x',
            source: { kind: 'pg', name: 'demo' },
            columns: ['id'],
            joins: [
              {
                namespace: 'y',
                on: 'true OR 1=1',
                source: { kind: 'pg', name: 'demo' },
                type: 'inner',
              },
            ],
          }),
          /on/,
        ],
        [
          withDataset({
            namespace: 'x',
            source: { kind: 'pg', name: 'demo' },
            columns: ['id'],
            filters: {
              logic: 'and',
              conditions: [{ condition: { column: 'id', op: 'in', value: 3 } }],
            },
          }),
          /value/,
        ],
      ];
      const before = await svc.call('GET', '/v1/requests?limit=100', { token: bob });
      for (const [body, field] of cases) {
        const res = await svc.call('POST', '/v1/requests', { token: bob, body });
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.text}`);
        assert.equal(res.body.error, 'validation_failed');
        assert.match(String(res.body.message), field);
      }
      const afterList = await svc.call('GET', '/v1/requests?limit=100', { token: bob });
      assert.equal((afterList.body.data as Json).total, (before.body.data as Json).total);
      const noAuth = await svc.call('POST', '/v1/requests', { body: newRequest() });
      assert.equal(noAuth.status, 401);
    });

    test('Idempotency-Key: a retry returns the first request; racing retries make one; keys are per caller', async () => {
      const key = `key-${Date.now()}`;
      const first = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest({ title: 'idem' }),
        headers: { 'idempotency-key': key },
      });
      assert.equal(first.status, 201);
      const retry = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest({ title: 'idem' }),
        headers: { 'idempotency-key': key },
      });
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(retry.body.data, first.body.data);
      const id = (first.body.data as RequestData).id;
      assert.equal(await auditCount(id), 1);

      const raceKey = `race-${Date.now()}`;
      const racing = await Promise.all(
        Array.from({ length: 5 }, () =>
          svc.call('POST', '/v1/requests', {
            token: ana,
            body: newRequest({ title: 'race' }),
            headers: { 'idempotency-key': raceKey },
          }),
        ),
      );
      assert.ok(racing.every((r) => r.status === 201));
      assert.equal(new Set(racing.map((r) => (r.body.data as RequestData).id)).size, 1);

      const bobSameKey = await svc.call('POST', '/v1/requests', {
        token: bob,
        body: newRequest({ title: 'idem' }),
        headers: { 'idempotency-key': key },
      });
      assert.equal(bobSameKey.status, 201);
      assert.notEqual((bobSameKey.body.data as RequestData).id, id);

      const badKey = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest(),
        headers: { 'idempotency-key': 'x'.repeat(201) },
      });
      assert.equal(badKey.status, 400);
      assert.equal(badKey.body.error, 'invalid_idempotency_key');
    });

    test('Idempotency-Key with another body: 422 idempotency_key_reused, nothing created; the same body in another form replays', async () => {
      const key = `reuse-${Date.now()}`;
      const first = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest({ title: 'first body' }),
        headers: { 'idempotency-key': key },
      });
      assert.equal(first.status, 201);
      const id = (first.body.data as RequestData).id;
      const listed = async () =>
        ((await svc.call('GET', '/v1/requests?limit=100', { token: ana })).body.data as { total: number })
          .total;
      const before = await listed();
      const other = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: newRequest({ title: 'second body' }),
        headers: { 'idempotency-key': key },
      });
      assert.equal(other.status, 422, other.text);
      assert.equal(other.body.error, 'idempotency_key_reused');
      assert.equal(await listed(), before);
      assert.equal(await auditCount(id), 1);
      // The same request written differently (member order) is the same body.
      const reordered = Object.fromEntries(Object.entries(newRequest({ title: 'first body' })).reverse());
      const same = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: reordered,
        headers: { 'idempotency-key': key },
      });
      assert.equal(same.status, 201, same.text);
      assert.equal((same.body.data as RequestData).id, id);
      // So is one that spells out the defaults the first one left implicit.
      const lean = { title: 'defaults', scope: sampleScope };
      const leanKey = `${key}-lean`;
      const a = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: lean,
        headers: { 'idempotency-key': leanKey },
      });
      const b = await svc.call('POST', '/v1/requests', {
        token: ana,
        body: { ...lean, risk_level: 'low', description: '', business_justification: '' },
        headers: { 'idempotency-key': leanKey },
      });
      assert.equal(b.status, 201, b.text);
      assert.equal((b.body.data as RequestData).id, (a.body.data as RequestData).id);
      // Racing retries with two different bodies: one request; each caller gets it or 422.
      const raceKey = `reuse-race-${Date.now()}`;
      const racing = await Promise.all(
        ['a', 'b', 'a', 'b', 'a'].map((t) =>
          svc.call('POST', '/v1/requests', {
            token: ana,
            body: newRequest({ title: `race ${t}` }),
            headers: { 'idempotency-key': raceKey },
          }),
        ),
      );
      const won = racing.filter((r) => r.status === 201);
      assert.ok(won.length >= 1 && racing.every((r) => r.status === 201 || r.status === 422));
      assert.equal(new Set(won.map((r) => (r.body.data as RequestData).id)).size, 1);
      assert.equal(new Set(won.map((r) => (r.body.data as RequestData).title)).size, 1);
      const [rows] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT count(*)::int AS n FROM requests WHERE idempotency_key = ${raceKey}`,
      );
      assert.equal(rows?.n, 1);
    });

    test("get: the owner and admins see it; another user's id, an unknown id and a malformed id are all 404", async () => {
      const r = await create(ana);
      const own = await svc.call('GET', `/v1/requests/${r.id}`, { token: ana });
      assert.equal(own.status, 200);
      assert.deepEqual(own.body.data, r);
      const byAdmin = await svc.call('GET', `/v1/requests/${r.id}`, { token: admin });
      assert.equal(byAdmin.status, 200);
      const adminGet = await svc.call('GET', `/v1/admin/requests/${r.id}`, { token: admin });
      assert.equal(adminGet.status, 200);
      assert.deepEqual(adminGet.body.data, r);
      const idor = await svc.call('GET', `/v1/requests/${r.id}`, { token: bob });
      assert.equal(idor.status, 404);
      assert.deepEqual(idor.body, { error: 'not_found', message: 'No request with this id.' });
      const unknown = await svc.call('GET', '/v1/requests/00000000-0000-4000-8000-000000000000', {
        token: bob,
      });
      assert.deepEqual(unknown.body, idor.body);
      const malformed = await svc.call('GET', '/v1/requests/not-a-uuid', { token: bob });
      assert.equal(malformed.status, 404);
      const adminRouteByUser = await svc.call('GET', `/v1/admin/requests/${r.id}`, { token: ana });
      assert.equal(adminRouteByUser.status, 403);
    });

    test('list own: only the caller’s requests, paginated, newest first', async () => {
      const res = await svc.call('GET', '/v1/requests?limit=2', { token: ana });
      assert.equal(res.status, 200);
      const data = res.body.data as { requests: RequestData[]; total: number; limit: number; offset: number };
      assert.equal(data.limit, 2);
      assert.equal(data.offset, 0);
      assert.equal(data.requests.length, 2);
      assert.ok(data.total >= 4);
      const all = await svc.call('GET', '/v1/requests?limit=100', { token: ana });
      const rows = (all.body.data as { requests: RequestData[] }).requests;
      assert.ok(rows.every((r) => r.requester.id === anaId));
      const times = rows.map((r) => r.created_at);
      assert.deepEqual(times, [...times].sort().reverse());
      const bobs = await svc.call('GET', '/v1/requests?limit=100', { token: bob });
      assert.ok(
        (bobs.body.data as { requests: RequestData[] }).requests.every((r) => r.requester.id !== anaId),
      );
      assert.equal((await svc.call('GET', '/v1/requests?limit=101', { token: ana })).status, 400);
    });

    test('approve: sets approved_at/approved_by/notes, audited; the admin who asked cannot approve; twice is 404 request_not_pending', async () => {
      const r = await create(ana);
      const res = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, {
        token: admin,
        body: { notes: 'ok for Q3' },
      });
      assert.equal(res.status, 200, res.text);
      const a = res.body.data as RequestData;
      assert.equal(a.status, 'approved');
      assert.equal(a.approval_notes, 'ok for Q3');
      assert.equal(a.approved_by, 'admin@example.test');
      assert.ok(Math.abs(Date.parse(String(a.approved_at)) - Date.now()) < 60_000);
      const audits = await auditActions(r.id);
      assert.deepEqual(
        audits.map((l) => l.action_type),
        ['request.created', 'request.approved'],
      );

      const again = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin });
      assert.equal(again.status, 404);
      assert.equal(again.body.error, 'request_not_pending');
      const deny = await svc.call('POST', `/v1/admin/requests/${r.id}/deny`, {
        token: admin,
        body: { reason: 'no' },
      });
      assert.equal(deny.status, 409);
      assert.equal(await auditCount(r.id), 2, 'refused moves write no audit record');

      // No body at all is fine too (notes are optional).
      const own = await create(admin);
      const self = await svc.call('POST', `/v1/admin/requests/${own.id}/approve`, { token: admin });
      assert.equal(self.status, 403);
      const still = await svc.call('GET', `/v1/requests/${own.id}`, { token: admin });
      assert.equal((still.body.data as RequestData).status, 'pending');
      assert.equal(await auditCount(own.id), 1);
      const other = await svc.call('POST', `/v1/admin/requests/${own.id}/approve`, { token: admin2 });
      assert.equal(other.status, 200);
      assert.equal((other.body.data as RequestData).approval_notes, null);

      const byUser = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: ana });
      assert.equal(byUser.status, 403);
      const unknown = await svc.call(
        'POST',
        '/v1/admin/requests/00000000-0000-4000-8000-000000000000/approve',
        {
          token: admin,
        },
      );
      assert.equal(unknown.status, 404);
      const none = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`);
      assert.equal(none.status, 401);
    });

    test('deny: reason required; pending → denied; every later move is refused and unaudited', async () => {
      const r = await create(ana);
      const noReason = await svc.call('POST', `/v1/admin/requests/${r.id}/deny`, { token: admin, body: {} });
      assert.equal(noReason.status, 400);
      assert.match(String(noReason.body.message), /reason/);
      const blank = await svc.call('POST', `/v1/admin/requests/${r.id}/deny`, {
        token: admin,
        body: { reason: '   ' },
      });
      assert.equal(blank.status, 400);
      const res = await svc.call('POST', `/v1/admin/requests/${r.id}/deny`, {
        token: admin,
        body: { reason: 'too broad' },
      });
      assert.equal(res.status, 200);
      const d = res.body.data as RequestData;
      assert.equal(d.status, 'denied');
      assert.equal(d.denial_reason, 'too broad');
      const approve = await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin });
      assert.equal(approve.status, 404);
      assert.equal(approve.body.error, 'request_not_pending');
      const revoke = await svc.call('POST', `/v1/requests/${r.id}/revoke`, { token: ana });
      assert.equal(revoke.status, 400);
      assert.equal(revoke.body.error, 'not_revocable');
      assert.deepEqual(
        (await auditActions(r.id)).map((l) => l.action_type),
        ['request.created', 'request.denied'],
      );
    });

    test('revoke: requester or admin; anyone else 404; 400 when pending or already revoked', async () => {
      const pending = await create(ana);
      const early = await svc.call('POST', `/v1/requests/${pending.id}/revoke`, { token: ana });
      assert.equal(early.status, 400);
      assert.equal(early.body.error, 'not_revocable');

      const r = await create(ana);
      await svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin });
      const byBob = await svc.call('POST', `/v1/requests/${r.id}/revoke`, {
        token: bob,
        body: { reason: 'x' },
      });
      assert.equal(byBob.status, 404);
      const res = await svc.call('POST', `/v1/requests/${r.id}/revoke`, {
        token: ana,
        body: { reason: 'done with it' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.body.data as RequestData).status, 'revoked');
      const twice = await svc.call('POST', `/v1/requests/${r.id}/revoke`, { token: ana });
      assert.equal(twice.status, 400);
      const logs = await auditActions(r.id);
      assert.deepEqual(
        logs.map((l) => l.action_type),
        ['request.created', 'request.approved', 'request.revoked'],
      );

      const r2 = await create(ana);
      await svc.call('POST', `/v1/admin/requests/${r2.id}/approve`, { token: admin });
      const byAdmin = await svc.call('POST', `/v1/requests/${r2.id}/revoke`, { token: admin });
      assert.equal(byAdmin.status, 200);
      assert.equal((byAdmin.body.data as RequestData).status, 'revoked');
      const unknown = await svc.call('POST', '/v1/requests/00000000-0000-4000-8000-000000000000/revoke', {
        token: ana,
      });
      assert.equal(unknown.status, 404);
    });

    test('concurrent approve and deny of one request: exactly one wins, one audit record', async () => {
      const r = await create(ana);
      const [x, y] = await Promise.all([
        svc.call('POST', `/v1/admin/requests/${r.id}/approve`, { token: admin }),
        svc.call('POST', `/v1/admin/requests/${r.id}/deny`, { token: admin2, body: { reason: 'race' } }),
      ]);
      // Exactly one wins; the other is refused as a move from a state that is no longer pending (approve: 404
      // request_not_pending, deny: 409 invalid_transition).
      const outcomes = [x.status, y.status].sort().join();
      assert.ok(outcomes === '200,404' || outcomes === '200,409', outcomes);
      assert.equal(await auditCount(r.id), 2);
    });

    test('admin list: filters, sort, default 20, maximum 100; out of range capped and unknown values matching nothing (no 400), admins only', async () => {
      const highs = [];
      for (let i = 0; i < 3; i++)
        highs.push(await create(bob, newRequest({ risk_level: 'high', title: `h${i}` })));
      for (let i = 0; i < 8; i++) await create(bob, newRequest({ risk_level: 'low', title: `l${i}` }));
      const res = await svc.call('GET', '/v1/admin/requests', { token: admin });
      assert.equal(res.status, 200);
      const data = res.body.data as { requests: RequestData[]; total: number; limit: number; offset: number };
      assert.equal(data.limit, 20);
      assert.equal(data.offset, 0);
      assert.ok(data.total > 20, `need more than 20 requests, have ${data.total}`);
      assert.equal(data.requests.length, 20);
      const desc = data.requests.map((r) => r.created_at);
      assert.deepEqual(desc, [...desc].sort().reverse());

      const asc = await svc.call('GET', '/v1/admin/requests?sort=created_at&limit=100', { token: admin });
      const ascRows = (asc.body.data as { requests: RequestData[] }).requests;
      const ascTimes = ascRows.map((r) => r.created_at);
      assert.deepEqual(ascTimes, [...ascTimes].sort());
      assert.equal(ascRows.length, Math.min(100, data.total));

      const high = await svc.call('GET', '/v1/admin/requests?risk_level=high&limit=100', { token: admin });
      const highRows = (high.body.data as { requests: RequestData[]; total: number }).requests;
      assert.equal((high.body.data as { total: number }).total, 3);
      assert.ok(highRows.every((r) => r.risk_level === 'high'));

      const denied = await svc.call('GET', '/v1/admin/requests?status=denied', { token: admin });
      const deniedRows = (denied.body.data as { requests: RequestData[] }).requests;
      assert.ok(deniedRows.length >= 1 && deniedRows.every((r) => r.status === 'denied'));
      const both = await svc.call('GET', '/v1/admin/requests?status=pending&risk_level=high', {
        token: admin,
      });
      assert.equal((both.body.data as { total: number }).total, 3);

      const page2 = await svc.call('GET', '/v1/admin/requests?limit=5&offset=5', { token: admin });
      const p2 = (page2.body.data as { requests: RequestData[] }).requests.map((r) => r.id);
      const first10 = await svc.call('GET', '/v1/admin/requests?limit=10', { token: admin });
      assert.deepEqual(
        p2,
        (first10.body.data as { requests: RequestData[] }).requests.slice(5).map((r) => r.id),
      );

      // The spec lists no 400 here: out-of-range paging is capped, unknown values match nothing or are the default,
      // and the answer says what was applied.
      const page = async (q: string) => {
        const res = await svc.call('GET', `/v1/admin/requests?${q}`, { token: admin });
        assert.equal(res.status, 200, `${q}: ${res.text}`);
        const d = res.body.data as { requests: RequestData[]; total: number; limit: number; offset: number };
        return { ...d, ids: d.requests.map((r) => r.id) };
      };
      for (const [q, limit, offset] of [
        ['limit=0', 1, 0],
        ['limit=-3', 1, 0],
        ['limit=101', 100, 0],
        ['limit=500', 100, 0],
        ['limit=abc', 20, 0],
        ['limit=', 20, 0],
        ['limit=2.9', 2, 0],
        ['offset=-1', 20, 0],
        ['offset=x', 20, 0],
        ['offset=5000000', 20, 1_000_000],
      ] as const) {
        const d = await page(q);
        assert.deepEqual([d.limit, d.offset], [limit, offset], q);
        assert.equal(d.requests.length, Math.max(0, Math.min(limit, d.total - offset)), q);
      }
      for (const q of [
        'status=open',
        'risk_level=extreme',
        'status=PENDING',
        'status=pending&risk_level=x',
      ]) {
        const d = await page(q);
        assert.deepEqual([d.total, d.requests.length], [0, 0], q);
      }
      assert.deepEqual((await page('sort=title&limit=100')).ids, (await page('limit=100')).ids);
      assert.deepEqual((await page('status=&risk_level=&unknown=1')).total, data.total);
      assert.equal((await svc.call('GET', '/v1/admin/requests?limit=100', { token: admin })).status, 200);
      // The caller's own list is not the admin's: it still refuses what it does not take.
      const own = await svc.call('GET', '/v1/requests?limit=500', { token: admin });
      assert.equal(own.status, 400);
      assert.match(String(own.body.message), /^query\.limit: /);
      assert.equal((await svc.call('GET', '/v1/admin/requests', { token: ana })).status, 403);
      assert.equal((await svc.call('GET', '/v1/admin/requests')).status, 401);
    });

    test('catalog: users read, admins create and patch (unwrapped), every change audited', async () => {
      const body = {
        datasource_id: 'ds-demo',
        datasource_name: 'demo',
        target_name: 'orders',
        target_location: 'public.orders',
        summary: 'Orders',
        scan_policy: 'daily',
        metadata: { owner: 'finance' },
        schema: { columns: [{ name: 'id', type: 'integer' }] },
      };
      const created = await svc.call('POST', '/v1/admin/catalog', { token: admin, body });
      assert.equal(created.status, 201, created.text);
      const entry = created.body.data as Json & { id: string };
      assert.equal(entry.datasource_name, 'demo');
      assert.deepEqual(entry.schema, body.schema);
      assert.equal((await svc.call('POST', '/v1/admin/catalog', { token: ana, body })).status, 403);
      const missing = await svc.call('POST', '/v1/admin/catalog', {
        token: admin,
        body: { datasource_id: 'x' },
      });
      assert.equal(missing.status, 400);
      assert.match(String(missing.body.message), /datasource_name/);

      const list = await svc.call('GET', '/v1/catalog', { token: ana });
      assert.equal(list.status, 200);
      const listData = list.body.data as { entries: Json[]; total: number; limit: number };
      assert.equal(listData.limit, 20);
      assert.ok(listData.entries.some((e) => e.id === entry.id));
      const filtered = await svc.call('GET', '/v1/catalog?datasource_name=nope', { token: ana });
      assert.equal((filtered.body.data as { total: number }).total, 0);
      const one = await svc.call('GET', `/v1/catalog/${entry.id}`, { token: ana });
      assert.equal(one.status, 200);
      assert.deepEqual(one.body.data, entry);
      assert.equal(
        (await svc.call('GET', '/v1/catalog/00000000-0000-4000-8000-000000000000', { token: ana })).status,
        404,
      );
      assert.equal((await svc.call('GET', '/v1/catalog')).status, 401);

      const patched = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, {
        token: admin,
        body: { summary: 'All orders', metadata: { owner: 'ops' } },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.success, undefined, 'the catalog update is unwrapped');
      assert.equal(patched.body.summary, 'All orders');
      assert.deepEqual(patched.body.metadata, { owner: 'ops' });
      assert.equal(patched.body.target_name, 'orders', 'fields not sent are kept');
      assert.ok(String(patched.body.updated_at) >= String(entry.updated_at));
      // An empty patch (every field is optional) changes nothing: the entry as it is, no audit record.
      const empty = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, { token: admin, body: {} });
      assert.equal(empty.status, 200, empty.text);
      assert.deepEqual(empty.body, patched.body);
      const noBody = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, { token: admin });
      assert.equal(noBody.status, 200, noBody.text);
      assert.deepEqual(noBody.body, patched.body);
      const emptyGone = await svc.call('PATCH', '/v1/admin/catalog/00000000-0000-4000-8000-000000000000', {
        token: admin,
        body: {},
      });
      assert.equal(emptyGone.status, 404);
      // The entry as read, sent back with a change: its read-only members are ignored, whatever they say.
      const roundTrip = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, {
        token: admin,
        body: { ...patched.body, id: 'another', datasource_id: 'changed', summary: 'Every order' },
      });
      assert.equal(roundTrip.status, 200, roundTrip.text);
      assert.deepEqual(
        [
          roundTrip.body.id,
          roundTrip.body.datasource_id,
          roundTrip.body.datasource_name,
          roundTrip.body.summary,
        ],
        [entry.id, entry.datasource_id, entry.datasource_name, 'Every order'],
      );
      assert.equal(roundTrip.body.created_at, entry.created_at);
      // Read-only members alone, or nulls (a null is the field left out), are an empty patch: nothing changes.
      for (const body of [
        { datasource_id: 'changed', updated_at: null },
        { summary: null, schema: null },
      ]) {
        const unchanged = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, { token: admin, body });
        assert.equal(unchanged.status, 200, unchanged.text);
        assert.deepEqual(unchanged.body, roundTrip.body);
      }
      // Any other unknown member is still refused, named.
      const badField = await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, {
        token: admin,
        body: { summary: 'x', owner: 'me' },
      });
      assert.equal(badField.status, 400);
      assert.match(String(badField.body.message), /body\.owner: /);
      const gone = await svc.call('PATCH', '/v1/admin/catalog/00000000-0000-4000-8000-000000000000', {
        token: admin,
        body: { summary: 'x' },
      });
      assert.equal(gone.status, 404);
      assert.equal(
        (await svc.call('PATCH', `/v1/admin/catalog/${entry.id}`, { token: ana, body: { summary: 'x' } }))
          .status,
        403,
      );
      const logs = await auditActions(entry.id);
      assert.deepEqual(
        logs.map((l) => l.action_type),
        ['catalog.created', 'catalog.updated', 'catalog.updated'],
      );
    });

    test('logshipper ingestion: a batch is stored in order with source logshipper and the chain stays intact', async () => {
      const records = [1, 2, 3].map((i) => ({
        action_type: 'query.executed',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        actor_email: 'ana@example.test',
        container_id: `c-${i}`,
        resource_type: 'environment',
        resource_id: 'env-logship',
        level: 'info',
        metadata: { i },
      }));
      const res = await svc.call('POST', '/v1/admin/audit-logs', { token: admin, body: { records } });
      assert.equal(res.status, 201, res.text);
      assert.equal((res.body.data as { accepted: number }).accepted, 3);
      const logs = await svc.call('GET', '/v1/admin/audit-logs?source=logshipper&sort=timestamp', {
        token: admin,
      });
      const rows = (logs.body.data as { logs: Array<Json & { metadata: Json }> }).logs;
      assert.deepEqual(
        rows.map((r) => r.container_id),
        ['c-1', 'c-2', 'c-3'],
      );
      assert.equal(rows[0]?.timestamp, '2026-01-01T00:00:01.000Z');
      assert.equal(rows[0]?.metadata.ingested_by, 'admin@example.test');
      const seq = await queryRows(
        svc.runtime.database.db,
        sql`SELECT container_id FROM audit_logs WHERE source = 'logshipper' ORDER BY seq`,
      );
      assert.deepEqual(
        seq.map((r) => r.container_id),
        ['c-1', 'c-2', 'c-3'],
      );
      assert.equal(
        (await svc.call('POST', '/v1/admin/audit-logs', { token: admin, body: { records: [] } })).status,
        400,
      );
      const badRecord = await svc.call('POST', '/v1/admin/audit-logs', {
        token: admin,
        body: { records: [{ action_type: 'x' }] },
      });
      assert.equal(badRecord.status, 400);
      assert.match(String(badRecord.body.message), /timestamp/);
      assert.equal(
        (await svc.call('POST', '/v1/admin/audit-logs', { token: ana, body: { records } })).status,
        403,
      );
      const verify = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal((verify.body.data as { intact: boolean }).intact, true);
    });

    test("the log shipper's service token: it ingests, and no other route takes it", async () => {
      const record = {
        action_type: 'container.started',
        timestamp: '2026-01-02T00:00:00.000Z',
        actor_email: 'ana@example.test',
        resource_type: 'environment',
        resource_id: 'env-shipper-token',
      };
      const res = await svc.call('POST', '/v1/admin/audit-logs', {
        token: SHIPPER_TOKEN,
        body: { records: [record] },
      });
      assert.equal(res.status, 201, res.text);
      const logs = await svc.call('GET', '/v1/admin/audit-logs?resource_id=env-shipper-token', {
        token: admin,
      });
      const [row] = (logs.body.data as { logs: Array<Json & { metadata: Json }> }).logs;
      assert.equal(row?.source, 'logshipper');
      assert.equal(
        row?.metadata.ingested_by,
        'service-token:audit.ingest_token',
        'the record names its sender',
      );

      const r = await create(ana);
      for (const [method, path] of [
        ['GET', '/v1/admin/audit-logs'],
        ['GET', '/v1/admin/audit-logs/verify'],
        ['GET', '/v1/admin/requests'],
        ['POST', `/v1/admin/requests/${r.id}/approve`],
        ['GET', '/v1/requests'],
        ['GET', '/v1/me'],
      ] as const) {
        const other = await svc.call(method, path, { token: SHIPPER_TOKEN });
        assert.equal(other.status, 401, `${method} ${path}: ${other.text}`);
      }
      const still = await svc.call('GET', `/v1/admin/requests/${r.id}`, { token: admin });
      assert.equal((still.body.data as RequestData).status, 'pending');
      const wrong = await svc.call('POST', '/v1/admin/audit-logs', {
        token: `${SHIPPER_TOKEN.slice(0, -1)}x`,
        body: { records: [record] },
      });
      assert.equal(wrong.status, 401, wrong.text);
      const [count] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT count(*)::int AS n FROM audit_logs WHERE resource_id = 'env-shipper-token'`,
      );
      assert.equal(count?.n, 1, 'the refused batch stored nothing');
    });

    test('audit verify: intact, then a row changed behind the service’s back is found', async () => {
      const ok = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      assert.equal(ok.status, 200);
      type Point = { seq: number; hash: string; created_at: string };
      const data = ok.body.data as { intact: boolean; checked: number; broken_at: unknown; head: Point };
      assert.equal(data.intact, true);
      assert.ok(data.checked > 10);
      assert.equal(data.broken_at, null);
      // The head (last seq and hash) is what an auditor keeps outside; ?at_seq= reports a record's hash later.
      const [last] = await queryRows(
        svc.runtime.database.db,
        sql`SELECT seq::int AS seq, hash, (SELECT count(*)::int FROM audit_logs) AS n FROM audit_logs ORDER BY seq DESC LIMIT 1`,
      );
      assert.deepEqual({ seq: data.head.seq, hash: data.head.hash }, { seq: last?.seq, hash: last?.hash });
      assert.equal(data.checked, last?.n);
      const anchored = await svc.call('GET', `/v1/admin/audit-logs/verify?at_seq=${data.head.seq}`, {
        token: admin,
      });
      assert.deepEqual((anchored.body.data as { at: Point }).at, data.head);
      const past = await svc.call('GET', `/v1/admin/audit-logs/verify?at_seq=${data.head.seq + 1000}`, {
        token: admin,
      });
      assert.equal((past.body.data as { at: Point | null }).at, null);
      assert.equal(
        (await svc.call('GET', '/v1/admin/audit-logs/verify?at_seq=zero', { token: admin })).status,
        400,
      );
      assert.equal((await svc.call('GET', '/v1/admin/audit-logs/verify', { token: ana })).status, 403);

      const db = svc.runtime.database.db;
      const [victim] = await queryRows(
        db,
        sql`SELECT id::text AS id, seq::int AS seq FROM audit_logs WHERE action_type = 'request.approved' ORDER BY seq LIMIT 1`,
      );
      assert.ok(victim);
      await db.transaction(async (tx) => {
        // What someone with direct database access could do: bypass the append-only trigger and rewrite a row.
        await tx.execute(sql`SET LOCAL session_replication_role = replica`);
        await tx.execute(
          sql`UPDATE audit_logs SET actor_email = 'someone-else@example.test' WHERE id = ${victim.id}::uuid`,
        );
      });
      const broken = await svc.call('GET', '/v1/admin/audit-logs/verify', { token: admin });
      const b = broken.body.data as {
        intact: boolean;
        broken_at: { id: string; seq: number };
        head: { seq: number; hash: string } | null;
      };
      assert.equal(b.intact, false);
      assert.equal(b.broken_at.id, victim.id);
      assert.equal(b.broken_at.seq, victim.seq);
      // The head is the last record before the break.
      const [beforeBreak] = await queryRows(
        db,
        sql`SELECT seq::int AS seq, hash FROM audit_logs WHERE seq < ${victim.seq} ORDER BY seq DESC LIMIT 1`,
      );
      assert.deepEqual(b.head && { seq: b.head.seq, hash: b.head.hash }, beforeBreak ?? null);
      assert.ok(adminId);
    });
  });
}
