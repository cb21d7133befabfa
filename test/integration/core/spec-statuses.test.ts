// The spec's Errors table (service-spec.md, "Errors"), walked on every driver: each of its six routes is driven with
// the inputs that used to answer a status the spec does not list for it, and every answer must be a success or one
// of the listed statuses, with an {error, message} body. 503 for a database outage is not driven here: it is a
// dependency fault, documented separately (docs/api.md, "When to retry"; test/integration/core/fault-matrix.test.ts).
//
// The route table carries the table (RouteSpec.specErrors) and the OpenAPI document documents exactly it, plus 503
// and the exceptions a row declares in `errors`: approve's 400 for a body that is not the documented shape (no
// other status refuses malformed input), and the two admin lists' 400 for a parameter that is no text (U+0000, an
// escape that is not percent-encoded UTF-8), which they refuse as every route does. Approving a request that is not
// pending is 404 request_not_pending; a body over the limit of a route whose list has no 413 is 400
// payload_too_large, and a body in a charset other than UTF-8 on a route whose list has no 415 is 400.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { errorStatuses, type RouteSpec } from '#shared/core/http/route.ts';
import { buildOpenApi } from '#shared/meta/openapi.ts';
import { routeList } from '#shared/routes.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const NAMES: Record<string, number> = {
  'Bad Request': 400,
  Unauthorized: 401,
  Forbidden: 403,
  'Not Found': 404,
  Conflict: 409,
  'Internal Server Error': 500,
  'Bad Gateway': 502,
  'Service Unavailable': 503,
};

/** The spec's table, as it names the statuses. */
const SPEC_ERRORS: Record<string, string[]> = {
  'GET /v1/admin/requests': ['Unauthorized', 'Forbidden', 'Internal Server Error'],
  'POST /v1/admin/requests/{id}/approve': ['Unauthorized', 'Forbidden', 'Not Found', 'Internal Server Error'],
  'POST /v1/requests/{id}/revoke': ['Bad Request', 'Unauthorized', 'Not Found', 'Internal Server Error'],
  'POST /v1/requests/{id}/query': [
    'Bad Request',
    'Unauthorized',
    'Not Found',
    'Conflict',
    'Internal Server Error',
    'Bad Gateway',
    'Service Unavailable',
  ],
  'PATCH /v1/admin/catalog/{id}': [
    'Bad Request',
    'Unauthorized',
    'Forbidden',
    'Not Found',
    'Internal Server Error',
  ],
  'GET /v1/admin/audit-logs': ['Unauthorized', 'Forbidden', 'Internal Server Error'],
};

const rowOf = (key: string): RouteSpec => {
  const [method, path] = key.split(' ');
  const row = routeList.find(([, r]) => r.method === method && r.path === path)?.[1];
  assert.ok(row, `no route ${key}`);
  return row;
};

test("the route table carries the spec's table, and the OpenAPI document documents exactly it", () => {
  const document = buildOpenApi() as { paths: Record<string, Record<string, { responses: object }>> };
  for (const [key, names] of Object.entries(SPEC_ERRORS)) {
    const row = rowOf(key);
    const listed = names.map((name) => NAMES[name] as number).sort();
    assert.deepEqual([...(row.specErrors ?? [])].sort(), listed, key);
    const documented = Object.keys(document.paths[row.path]?.[row.method.toLowerCase()]?.responses ?? {})
      .map(Number)
      .filter((status) => status >= 400);
    const expected = [...new Set([...listed, 503, ...(row.errors ?? [])])].sort();
    assert.deepEqual(documented.sort(), expected, key);
    assert.deepEqual(errorStatuses(row), expected, key);
  }
});

interface Case {
  route: keyof typeof SPEC_ERRORS;
  what: string;
  method: string;
  path: string;
  token?: string;
  body?: unknown;
  /** Sent as it is, with Content-Type: application/json (also on a GET), or `contentType`. */
  rawBody?: string;
  contentType?: string;
  /** The status this input answers now. */
  expect: number;
}

/** A request over node:http, which (unlike fetch) can send a body with a GET. */
function rawCall(
  baseUrl: string,
  c: Pick<Case, 'method' | 'path' | 'token' | 'rawBody' | 'contentType'>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    if (c.rawBody !== undefined) {
      headers['content-type'] = c.contentType ?? 'application/json';
      // Framed: a GET body without a length would be read as the next request.
      headers['content-length'] = String(Buffer.byteLength(c.rawBody));
    }
    const req = httpRequest(new URL(c.path, baseUrl), { method: c.method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(c.rawBody);
  });
}

for (const driver of driversUnderTest()) {
  describe(`the spec's error statuses on ${driver}`, () => {
    let svc: TestService;
    let admin: string;
    let adminId: string;
    let ana: string;
    let anaCli: string;
    let bob: string;
    let anaRequest: string;
    let adminRequest: string;
    let entry: Record<string, unknown>;

    const makeUser = async (email: string) => {
      const password = 'a long enough password';
      const created = await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email, name: email.split('@')[0], password, roles: ['user'] },
      });
      assert.equal(created.status, 201, created.text);
      const login = await svc.call('POST', '/v1/auth/login', { body: { email, password } });
      return login.body.data as { access_token: string; user: { id: string; email: string } };
    };
    const createRequest = async (token: string) => {
      const res = await svc.call('POST', '/v1/requests', { token, body: demoOrdersRequest() });

      assert.equal(res.status, 201, res.text);
      return (res.body.data as { id: string }).id;
    };

    before(async () => {
      svc = await startTestService(driver);
      admin = await svc.adminToken();
      adminId = ((await svc.call('GET', '/v1/me', { token: admin })).body.data as { subject: string })
        .subject;
      const anaLogin = await makeUser('ana@example.test');
      ana = anaLogin.access_token;
      bob = (await makeUser('bob@example.test')).access_token;
      // What the CLI sign-in issues to Ana's agent: a token that only enrolls a device.
      anaCli = (
        await issueLocalToken(svc.runtime.config, {
          subject: anaLogin.user.id,
          email: anaLogin.user.email,
          name: 'ana',
          roles: ['user'],
          tokenUse: 'cli',
        })
      ).access_token;
      anaRequest = await createRequest(ana);
      adminRequest = await createRequest(admin);
      const created = await svc.call('POST', '/v1/admin/catalog', {
        token: admin,
        body: { datasource_id: 'ds-demo', datasource_name: 'demo', target_name: 'orders', summary: 'Orders' },
      });
      assert.equal(created.status, 201, created.text);
      entry = created.body.data as Record<string, unknown>;
      assert.ok(adminId);
    });
    after(async () => svc?.dispose());

    test('every route of the table answers only the statuses it lists, errors as {error, message}', async () => {
      const unknownId = '00000000-0000-4000-8000-000000000000';
      /** Cases of one route: each variant gives what it changes (token, path, body) and the status it answers. */
      type Variant = Pick<Case, 'what' | 'token' | 'expect'> &
        Partial<Pick<Case, 'path' | 'body' | 'rawBody' | 'contentType'>>;
      /** A body in a charset other than UTF-8: 415 is in none of these lists, so 400. */
      const latin1 = (token: string): Variant => ({
        what: 'a body in Latin-1',
        token,
        rawBody: '{}',
        contentType: 'application/json; charset=latin1',
        expect: 400,
      });
      const on = (route: Case['route'], path: string, body: unknown, variants: Variant[]): Case[] => {
        const method = route.split(' ')[0] as string;
        return variants.map((v) => ({ route, method, path, body, ...v }));
      };
      const queries = [
        'limit=500',
        'limit=0',
        'limit=-1',
        'limit=abc',
        'limit=',
        'limit=1&limit=2',
        'offset=-1',
        'offset=abc',
        'offset=99999999',
        'status=bogus',
        'risk_level=bogus',
        'source=bogus',
        'sort=bogus',
        'action_type=&actor_email=&resource_type=&resource_id=',
        `resource_id=${'x'.repeat(2000)}`,
        'unknown=1',
      ];
      const lists = (['GET /v1/admin/requests', 'GET /v1/admin/audit-logs'] as const).flatMap((route) => {
        const base = route.slice('GET '.length);
        return on(route, base, undefined, [
          ...queries.map((q) => ({ what: q, path: `${base}?${q}`, token: admin, expect: 200 })),
          { what: 'a body on a GET, not JSON', token: admin, rawBody: '{', expect: 200 },
          { what: 'a NUL in a filter', token: admin, path: `${base}?resource_id=a%00b`, expect: 400 },
          {
            what: 'a filter that is not UTF-8',
            token: admin,
            path: `${base}?resource_id=a%FFb`,
            expect: 400,
          },
          { what: 'no token', expect: 401 },
          { what: 'a user', token: ana, expect: 403 },
          { what: 'a CLI sign-in token', token: anaCli, expect: 401 },
        ]);
      });
      const query = `/v1/requests/${anaRequest}/query`;
      const approve = (id: string) => `/v1/admin/requests/${id}/approve`;
      const catalog = `/v1/admin/catalog/${entry.id}`;
      const cases: Case[] = [
        ...lists,
        // query: no 403 on any path.
        ...on('POST /v1/requests/{id}/query', query, { sql: 'SELECT 1' }, [
          { what: 'an admin who is not the requester', token: admin, expect: 404 },
          { what: "the requester's CLI sign-in token", token: anaCli, expect: 401 },
          { what: 'another user', token: bob, expect: 404 },
          { what: 'no token', expect: 401 },
          { what: 'the requester, request pending', token: ana, expect: 409 },
          { what: 'a bad body', token: ana, body: { sql: 1 }, expect: 400 },
          latin1(ana),
          {
            what: 'a body over the limit',
            token: ana,
            body: { sql: `SELECT '${'x'.repeat(140_000)}'` },
            expect: 400,
          },
          { what: 'an unknown id', token: ana, path: `/v1/requests/${unknownId}/query`, expect: 404 },
        ]),
        // revoke: no 403 either.
        ...on('POST /v1/requests/{id}/revoke', `/v1/requests/${anaRequest}/revoke`, {}, [
          { what: "the requester's CLI sign-in token", token: anaCli, expect: 401 },
          { what: 'another user', token: bob, expect: 404 },
          { what: 'no token', expect: 401 },
          { what: 'the requester, request pending (not revocable)', token: ana, expect: 400 },
          latin1(ana),
        ]),
        // approve and the catalog update list 403: a user, or the admin who asked, is Forbidden.
        ...on('POST /v1/admin/requests/{id}/approve', approve(anaRequest), {}, [
          { what: 'a CLI sign-in token', token: anaCli, expect: 401 },
          { what: 'a user', token: ana, expect: 403 },
          { what: 'the admin who asked', token: admin, path: approve(adminRequest), expect: 403 },
          { what: 'a body that is not the documented shape', token: admin, body: { notes: 5 }, expect: 400 },
          latin1(admin),
          { what: 'an unknown id', token: admin, path: approve(unknownId), expect: 404 },
          { what: 'no token', expect: 401 },
        ]),
        ...on('PATCH /v1/admin/catalog/{id}', catalog, {}, [
          { what: 'the entry as read, sent back', token: admin, body: entry, expect: 200 },
          { what: 'nulls', token: admin, body: { summary: null, metadata: null }, expect: 200 },
          { what: 'an unknown member', token: admin, body: { owner: 'x' }, expect: 400 },
          latin1(admin),
          {
            what: 'a body over the limit',
            token: admin,
            body: { summary: 'x'.repeat(1_100_000) },
            expect: 400,
          },
          { what: 'a CLI sign-in token', token: anaCli, expect: 401 },
          { what: 'a user', token: ana, expect: 403 },
          { what: 'an unknown id', token: admin, path: `/v1/admin/catalog/${unknownId}`, expect: 404 },
        ]),
      ];

      const wrong: string[] = [];
      for (const c of cases) {
        const res =
          c.rawBody !== undefined
            ? await rawCall(svc.url, c)
            : await svc
                .call(c.method, c.path, { token: c.token, body: c.body })
                .then((r) => ({ status: r.status, text: r.text }));
        // The spec's statuses, and the exceptions the route's row declares.
        const listed = [
          ...(SPEC_ERRORS[c.route] ?? []).map((name) => NAMES[name]),
          ...(rowOf(c.route).errors ?? []),
        ];
        const where = `${c.route}, ${c.what}: ${res.status} ${res.text.slice(0, 200)}`;
        if (res.status >= 400 && !listed.includes(res.status)) wrong.push(`${where} (not listed)`);
        else if (res.status !== c.expect) wrong.push(`${where} (expected ${c.expect})`);
        if (res.status >= 400) {
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(res.text) as Record<string, unknown>;
          } catch {
            // reported below
          }
          if (
            Object.keys(body).sort().join() !== 'error,message' ||
            typeof body.error !== 'string' ||
            typeof body.message !== 'string'
          ) {
            wrong.push(`${where} (not {error, message})`);
          }
        }
      }
      assert.deepEqual(wrong, []);
      assert.ok(cases.length > 50);
    });

    test('approving a request that is not pending is 404 request_not_pending, naming its status', async () => {
      const first = await svc.call('POST', `/v1/admin/requests/${anaRequest}/approve`, {
        token: admin,
        body: {},
      });
      assert.equal(first.status, 200, first.text);
      const again = await svc.call('POST', `/v1/admin/requests/${anaRequest}/approve`, {
        token: admin,
        body: {},
      });
      assert.equal(again.status, 404);
      assert.equal(again.body.error, 'request_not_pending');
      assert.match(String(again.body.message), /this one is (approved|active)/);
    });

    test('the lists say what they applied; unknown filter values match nothing', async () => {
      const get = async (path: string) => {
        const res = await svc.call('GET', path, { token: admin });
        assert.equal(res.status, 200, res.text);
        return res.body.data as Record<string, unknown> & { total: number; limit: number; offset: number };
      };
      for (const base of ['/v1/admin/requests', '/v1/admin/audit-logs']) {
        assert.deepEqual(
          [
            (await get(`${base}?limit=500&offset=-1`)).limit,
            (await get(`${base}?limit=500&offset=-1`)).offset,
          ],
          [100, 0],
        );
        const zero = await get(`${base}?limit=0`);
        assert.equal(zero.limit, 1);
        assert.equal((await get(`${base}?limit=abc`)).limit, 20);
        assert.ok((await get(base)).total > 0, `${base} has items`);
      }
      for (const q of ['status=bogus', 'risk_level=bogus']) {
        const none = await get(`/v1/admin/requests?${q}`);
        assert.deepEqual([none.total, (none.requests as unknown[]).length], [0, 0], q);
      }
      const none = await get('/v1/admin/audit-logs?source=bogus');
      assert.deepEqual([none.total, (none.logs as unknown[]).length], [0, 0]);
      // An unknown sort is the default: newest first (-created_at) on both.
      for (const [base, key] of [
        ['/v1/admin/requests', 'requests'],
        ['/v1/admin/audit-logs', 'logs'],
      ] as const) {
        const ids = async (q: string) =>
          ((await get(`${base}?${q}`))[key] as Array<{ id: string }>).map((x) => x.id);
        assert.deepEqual(await ids('sort=bogus&limit=10'), await ids('sort=-created_at&limit=10'));
        assert.deepEqual(await ids('limit=10'), await ids('sort=-created_at&limit=10'));
      }
    });
  });
}
