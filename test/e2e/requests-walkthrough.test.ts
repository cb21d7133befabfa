// The README's data-access walkthrough, as a newcomer runs it against `npm start` (a child process on embedded
// PGlite): the admin printed at start, a user created through the API, the seeded demo datasource, then create →
// approve → query → revoke, and the audit trail of it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, test } from 'node:test';
import { startMain } from '#test/support/child.ts';

const { child, waitFor } = startMain([], { SVC_DB_DSN: 'pglite:memory', PORT: '0' });
after(() => child.kill('SIGKILL'));

type Json = Record<string, unknown>;

test('README walkthrough: demo data, create → approve → query → revoke, audit', async () => {
  const [, url] = await waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
  const [, email, password] = await waitFor(/admin created: (\S+) \/ (\S+)/);
  const call = async (method: string, path: string, token?: string, body?: unknown, headers: Json = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(headers as Record<string, string>),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const data = (r: { body: Json }) => r.body.data as Json;

  const admin = data(await call('POST', '/v1/auth/login', undefined, { email, password }))
    .access_token as string;
  const user = await call('POST', '/v1/admin/users', admin, {
    email: 'ana@example.com',
    name: 'Ana',
    password: 'a long password',
    roles: ['user'],
  });
  assert.equal(user.status, 201);
  const ana = data(
    await call('POST', '/v1/auth/login', undefined, {
      email: 'ana@example.com',
      password: 'a long password',
    }),
  ).access_token as string;

  const catalog = data(await call('GET', '/v1/catalog', ana)).entries as Array<{ target_location: string }>;
  assert.deepEqual(
    catalog.map((e) => e.target_location),
    ['demo.customers', 'demo.orders', 'demo.products'],
  );

  const request = {
    title: 'EU revenue by country',
    business_justification: 'Quarterly close',
    risk_level: 'medium',
    scope: {
      datasources: [
        {
          datasets: [
            {
              namespace: 'eu_orders',
              source: { kind: 'postgres', name: 'demo', table: 'orders' },
              columns: ['id', 'total', 'status', 'ordered_at', 'customers.country'],
              filters: {
                logic: 'and',
                conditions: [
                  { condition: { column: 'region', op: 'eq', value: 'EU' } },
                  { condition: { column: 'status', op: 'in', value: ['paid', 'shipped'] } },
                ],
              },
              joins: [
                {
                  namespace: 'customers',
                  on: 'orders.customer_id = customers.id',
                  source: { kind: 'postgres', name: 'demo', table: 'customers' },
                },
              ],
            },
          ],
        },
      ],
    },
  };
  const created = await call('POST', '/v1/requests', ana, request, { 'Idempotency-Key': 'eu-revenue-1' });
  assert.equal(created.status, 201);
  const id = data(created).id as string;
  const pending = await call('POST', `/v1/requests/${id}/query`, ana, { sql: 'SELECT 1' });
  assert.equal(pending.body.error, 'request_not_active');

  const approved = data(
    await call('POST', `/v1/admin/requests/${id}/approve`, admin, { notes: 'ok for Q3' }),
  );
  assert.equal(approved.status, 'active');
  assert.equal(approved.environment_status, 'ready');

  const result = await call('POST', `/v1/requests/${id}/query`, ana, {
    sql: 'SELECT customers_country AS country, count(*) AS orders, sum(total) AS revenue FROM eu_orders GROUP BY 1 ORDER BY 3 DESC LIMIT 3',
  });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const rows = data(result).rows as unknown[][];
  assert.equal(rows.length, 3);
  assert.equal(typeof rows[0]?.[1], 'number');
  assert.equal(
    (await call('POST', `/v1/requests/${id}/query`, ana, { sql: 'SELECT * FROM demo.customers' })).body.error,
    'sql_refused',
  );
  const usage = data(await call('GET', `/v1/requests/${id}/usage-events?sort=timestamp`, ana));
  assert.deepEqual(
    (usage.usage_events as Array<{ action_type: string; metadata: Json }>).map(
      (u) => `${u.action_type} rows=${u.metadata.row_count}`,
    ),
    ['query rows=3', 'query_refused rows=undefined'],
  );

  const revoked = data(await call('POST', `/v1/requests/${id}/revoke`, ana, { reason: 'done' }));
  assert.equal(revoked.status, 'revoked');
  assert.equal(revoked.environment_status, 'torn_down');
  assert.equal((await call('POST', `/v1/requests/${id}/query`, ana, { sql: 'SELECT 1' })).status, 409);

  const logs = data(await call('GET', `/v1/admin/audit-logs?resource_id=${id}&sort=created_at`, admin))
    .logs as Array<{ source: string; action_type: string }>;
  assert.deepEqual(
    logs.map((l) => `${l.source}:${l.action_type}`),
    [
      'api:request.created',
      'api:request.approved',
      'env-svc:environment.provisioned',
      'env-svc:request.activated',
      'api:request.revoked',
      'env-svc:environment.torn_down',
    ],
  );
  const verify = data(await call('GET', '/v1/admin/audit-logs/verify', admin));
  assert.equal(verify.intact, true);
  assert.ok((verify.head as { hash: string }).hash.length === 64);

  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});
