// The middlewares of the HTTP edge (shared/core/http/middleware/), each on its own: what it adds to the context, what it
// refuses and with which error, and the one place (errorResponse) where errors become answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Context as LambdaContext } from 'aws-lambda';
import * as z from 'zod';
import { issueLocalToken } from '#shared/core/auth/local-tokens.ts';
import { type ErrorKind, ServiceError } from '#shared/core/errors.ts';
import type { HttpEvent, ServiceContext } from '#shared/core/http/context.ts';
import { httpHandler } from '#shared/core/http/handler.ts';
import { bearerAuth } from '#shared/core/http/middleware/bearer-auth.ts';
import { bodyLimit } from '#shared/core/http/middleware/body-limit.ts';
import {
  asServiceError,
  errorResponse,
  STATUS_OF_KIND,
  statusOf,
} from '#shared/core/http/middleware/error-response.ts';
import { jsonBody } from '#shared/core/http/middleware/json-body.ts';
import { mounted } from '#shared/core/http/middleware/mounted.ts';
import { requestText } from '#shared/core/http/middleware/request-text.ts';
import type { ServiceMiddleware, ServiceRequest } from '#shared/core/http/middleware/types.ts';
import { validate } from '#shared/core/http/middleware/validate.ts';
import { ok } from '#shared/core/http/reply.ts';
import { defineRoute, type RouteSpec } from '#shared/core/http/route.ts';
import { type LogSink, setLogSink } from '#shared/core/logger.ts';
import { createRuntime, type Runtime, setRuntime } from '#shared/core/runtime.ts';
import { createUser } from '#shared/identity/users.ts';
import { type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

let database: ProvisionedDatabase;
let runtime: Runtime;
let sink: LogSink;
before(async () => {
  // A migrated PGlite (the suite's template copied): the users table backs the callers of bearerAuth.
  database = await provisionDatabase('pglite');
  runtime = await createRuntime(testConfig({ db: { dsn: database.dsn } }));
  setRuntime(runtime);
  sink = setLogSink(() => {});
});
after(async () => {
  setLogSink(sink);
  setRuntime(undefined);
  await runtime?.database.close();
  await database?.cleanup();
});

const route = <const O extends Partial<RouteSpec>>(over: O = {} as O) =>
  defineRoute({
    method: 'POST',
    path: '/v1/things',
    handler: 'test/things',
    auth: 'public',
    summary: 't',
    tags: [],
    ...over,
  } as RouteSpec & O);

const event = (over: Partial<HttpEvent> = {}): HttpEvent =>
  ({
    version: '2.0',
    routeKey: 'POST /v1/things',
    rawPath: '/v1/things',
    rawQueryString: '',
    headers: {},
    requestContext: {
      requestId: 'gw-1',
      http: { method: 'POST', path: '/v1/things', sourceIp: '203.0.113.9' },
    },
    isBase64Encoded: false,
    ...over,
  }) as HttpEvent;

/** A request as the chain sees it after requestContext. */
const request = (over: Partial<HttpEvent> = {}, context: Partial<ServiceContext> = {}): ServiceRequest =>
  ({
    event: event(over),
    context: {
      requestId: 'r-1',
      runtime,
      config: runtime.config,
      db: runtime.database.db,
      headers: over.headers ?? {},
      rawBody: typeof over.body === 'string' ? over.body : undefined,
      rawBodyBytes: typeof over.body === 'string' ? Buffer.byteLength(over.body) : 0,
      ...context,
    } as ServiceContext,
    response: undefined,
    error: undefined,
    internal: {},
  }) as ServiceRequest;

const run = (m: ServiceMiddleware, r: ServiceRequest) =>
  (m.before as (r: ServiceRequest) => Promise<void>)(r);
const refusedWith = async (p: Promise<unknown>, kind: ErrorKind, code: string) =>
  assert.rejects(p, (err: unknown) => err instanceof ServiceError && err.kind === kind && err.code === code);

describe('httpHandler: the chain around a handler', () => {
  const lambda = {} as LambdaContext;
  const echo = httpHandler(route({ body: z.object({ name: z.string() }).strict() }), async ({ body }, ctx) =>
    ok({ name: body.name, requestId: ctx.requestId, ip: ctx.sourceIp }),
  );

  test('a request through every step: the reply in the envelope, x-request-id from the caller', async () => {
    const res = await echo(
      event({
        headers: { 'content-type': 'application/json', 'x-request-id': 'caller-7' },
        body: '{"name":"a"}',
      }),
      lambda,
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers?.['x-request-id'], 'caller-7');
    assert.deepEqual(JSON.parse(String(res.body)), {
      success: true,
      data: { name: 'a', requestId: 'caller-7', ip: '203.0.113.9' },
    });
  });

  test('a refusal anywhere in the chain is {error, message} with the request id', async () => {
    const res = await echo(
      event({ headers: { 'content-type': 'application/json' }, body: '{"name":1}' }),
      lambda,
    );
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers?.['x-request-id'], 'gw-1');
    const body = JSON.parse(String(res.body));
    assert.deepEqual(Object.keys(body).sort(), ['error', 'message']);
    assert.match(body.message, /^body\.name: /);
  });

  test('a device route needs a device authenticator, and only a device route takes one: checked at construction', () => {
    assert.throws(() => httpHandler(route({ auth: 'device' }), async () => ok({})), /device authenticator/);
  });
});

describe('middlewares on their own', () => {
  test('mounted: a route its config does not mount is 404 not_found', async () => {
    await refusedWith(run(mounted(route({ mountedWhen: () => false })), request()), 'not_found', 'not_found');
    await run(mounted(route({ mountedWhen: () => true })), request());
  });

  test('bodyLimit: larger than maxBody is too_large with the route’s code; at the bound it passes', async () => {
    const limited = bodyLimit(route({ maxBody: { bytes: 10, code: 'batch_too_large' } }));
    await refusedWith(run(limited, request({ body: 'x'.repeat(11) })), 'too_large', 'batch_too_large');
    await run(limited, request({ body: 'x'.repeat(10) }));
  });

  test('bearerAuth: no token 401; a CLI sign-in token 401 invalid_token off register; a user on an admin route 403', async () => {
    const admin = bearerAuth(route({ auth: 'admin' }));
    await refusedWith(run(admin, request()), 'unauthenticated', 'unauthorized');
    // Who may call is read from the users table (shared/core/auth/caller.ts): the person exists there.
    const user = await createUser(
      runtime.database.db,
      { email: 'u@example.test', name: 'U', password: 'a long enough password', roles: ['user'] },
      { id: 'test', email: 'test', ipAddress: '' },
    );
    const person = { subject: user.id, email: 'u@example.test', name: 'U', roles: ['user'] as const };
    const session = (
      await issueLocalToken(runtime.config, { ...person, roles: ['user'], tokenUse: 'session' })
    ).access_token;
    const cli = (await issueLocalToken(runtime.config, { ...person, roles: ['user'], tokenUse: 'cli' }))
      .access_token;
    const auth = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    await refusedWith(run(admin, request(auth(session), auth(session))), 'forbidden', 'forbidden');
    await refusedWith(
      run(bearerAuth(route({ auth: 'user' })), request(auth(cli), auth(cli))),
      'unauthenticated',
      'invalid_token',
    );
    const r = request(auth(cli), auth(cli));
    await run(bearerAuth(route({ auth: 'device+user' })), r);
    assert.equal(r.context.principal?.subject, user.id);
    // A token of a person the table does not have is no credential.
    const ghost = (
      await issueLocalToken(runtime.config, {
        ...person,
        roles: ['user'],
        subject: 'u-1',
        tokenUse: 'session',
      })
    ).access_token;
    await refusedWith(
      run(bearerAuth(route({ auth: 'user' })), request(auth(ghost), auth(ghost))),
      'unauthenticated',
      'invalid_token',
    );
  });

  test('jsonBody: absent stays absent, bad JSON and a wrong content type are 400, a route without a body ignores it', async () => {
    const takes = jsonBody(route({ body: z.object({}) }));
    const none = request();
    await run(takes, none);
    assert.equal(none.context.parsedBody, undefined);
    const json = { 'content-type': 'application/json' };
    await refusedWith(run(takes, request({ headers: json, body: '{' })), 'invalid', 'invalid_json');
    await refusedWith(
      run(takes, request({ headers: { 'content-type': 'text/plain' }, body: '{}' })),
      'invalid',
      'invalid_content_type',
    );
    // The fast path and middy's parser (taken when the text could spell __proto__) give the same value.
    const plain = request({ headers: json, body: '{"a":[1,{"b":"c"}]}' });
    const escaped = request({ headers: json, body: '{"a":[1,{"b":"\\u0063"}]}' });
    await run(takes, plain);
    await run(takes, escaped);
    assert.deepEqual(plain.context.parsedBody, escaped.context.parsedBody);
    const ignores = request({ headers: json, body: '{' });
    await run(jsonBody(route()), ignores);
    assert.equal(ignores.context.parsedBody, undefined);
  });

  test('requestText: a body API Gateway base64-encoded is decoded strictly; bytes that are not UTF-8 are 400 naming their field', async () => {
    const takes = requestText(route({ body: z.object({}) }));
    const json = { 'content-type': 'application/json' };
    const base64 = (b: Buffer) => ({ headers: json, body: b.toString('base64'), isBase64Encoded: true });
    const good = request(base64(Buffer.from('{"name":"é😀"}')));
    await run(takes, good);
    assert.deepEqual(
      [good.event.body, good.event.isBase64Encoded, good.context.rawBody],
      ['{"name":"é😀"}', false, '{"name":"é😀"}'],
    );
    const bad = request(
      base64(Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff]), Buffer.from('"}')])),
    );
    await assert.rejects(run(takes, bad), {
      code: 'validation_failed',
      message: 'body.name: is not valid UTF-8 (byte 0xFF at offset 10 of the body): send text as UTF-8',
    });
    // A text body whose length is not the Content-Length sent: a gateway put U+FFFD where the bytes were.
    await assert.rejects(
      run(takes, request({ headers: { ...json, 'content-length': '12' }, body: '{"name":"\ufffd"}' })),
      { code: 'validation_failed', message: /^body: is not valid UTF-8: Content-Length says 12 bytes/ },
    );
    await run(takes, request({ headers: { ...json, 'content-length': '14' }, body: '{"name":"\ufffd"}' }));
  });

  test('requestText: a charset other than UTF-8 is 415 naming the header (400 where the route takes no body or lists no 415)', async () => {
    const body = '{}';
    const charset = (c: string) => ({ headers: { 'content-type': `application/json; charset=${c}` }, body });
    await refusedWith(
      run(requestText(route({ body: z.object({}) })), request(charset('latin1'))),
      'unsupported_media_type',
      'unsupported_charset',
    );
    await assert.rejects(run(requestText(route({ body: z.object({}) })), request(charset('utf-16'))), {
      message: /^Content-Type: charset=utf-16 is not taken/,
    });
    await refusedWith(
      run(requestText(route()), request(charset('latin1'))),
      'invalid',
      'unsupported_charset',
    );
    await refusedWith(
      run(
        requestText(route({ body: z.object({}), specErrors: [400, 401, 500] })),
        request(charset('latin1')),
      ),
      'invalid',
      'unsupported_charset',
    );
    for (const c of ['utf-8', 'UTF-8', 'utf8', '"utf-8"'])
      await run(requestText(route({ body: z.object({}) })), request(charset(c)));
  });

  test('requestText: a query escape that is not percent-encoded UTF-8 is 400 naming the parameter', async () => {
    const m = requestText(route({ method: 'GET' }));
    await assert.rejects(run(m, request({ rawQueryString: 'state=a%FFb&x=1' })), {
      code: 'validation_failed',
      message: 'query.state: is not percent-encoded UTF-8 (%FF)',
    });
    await assert.rejects(run(m, request({ rawQueryString: 'a=1&limit=%ZZ' })), {
      message: 'query.limit: is not percent-encoded UTF-8 (%ZZ)',
    });
    await run(m, request({ rawQueryString: 'state=%E2%82%AC+x&y=%25FF' }));
  });

  test('validate: prechecks first, then each part; a refusal lets the authenticator finish first', async () => {
    const order: string[] = [];
    const m = validate(route({ body: z.object({ n: z.number() }) }), [() => order.push('precheck')]);
    const r = request(
      {},
      { parsedBody: { n: 'x' }, beforeBodyRejected: async () => void order.push('authenticator') },
    );
    await refusedWith(run(m, r), 'invalid', 'validation_failed');
    assert.deepEqual(order, ['precheck', 'authenticator']);
    const good = request({}, { parsedBody: { n: 1 } });
    await run(m, good);
    assert.deepEqual(good.context.input?.body, { n: 1 });
    await refusedWith(
      run(m, request({}, { parsedBody: { n: 1, 'k\u0000': 1 } })),
      'invalid',
      'validation_failed',
    );
  });
});

describe('errorResponse: the one place errors become answers', () => {
  const answer = async (r: RouteSpec, error: unknown) => {
    const req = request();
    req.error = error as Error;
    await (errorResponse(r).onError as (r: ServiceRequest) => Promise<void>)(req);
    return req.response!;
  };

  test('each kind has its status, unless the route’s spec says otherwise (statusOf)', async () => {
    for (const [kind, status] of Object.entries(STATUS_OF_KIND)) {
      assert.equal((await answer(route(), new ServiceError(kind as ErrorKind, 'c', 'm'))).statusCode, status);
    }
    const approve = route({ statusOf: { conflict: 404 } });
    assert.equal(statusOf(approve, 'conflict'), 404);
    assert.equal(
      (await answer(approve, new ServiceError('conflict', 'request_not_pending', 'm'))).statusCode,
      404,
    );
  });

  test('Retry-After when retrying helps; WWW-Authenticate on a 401 of a bearer route only', async () => {
    const busy = await answer(route(), new ServiceError('rate_limited', 'too_many_attempts', 'm', 30));
    assert.equal(busy.headers?.['retry-after'], '30');
    const bearer = await answer(
      route({ auth: 'user' }),
      new ServiceError('unauthenticated', 'unauthorized', 'm'),
    );
    assert.equal(bearer.headers?.['www-authenticate'], 'Bearer');
    const device = await answer(
      route({ auth: 'device' }),
      new ServiceError('unauthenticated', 'unknown_device', 'm'),
    );
    assert.equal(device.headers?.['www-authenticate'], undefined);
  });

  test('a database fault is 503; anything else is 500 and says nothing about itself', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
    });
    assert.equal(asServiceError(new Error('Failed query', { cause: refused })).code, 'database_unavailable');
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), {
      code: '57014',
    });
    assert.match(asServiceError(timeout, 20_000).message, /db\.statement_timeout = 20 s/);
    const leak = await answer(route(), new Error('select secret from users where password = $1'));
    assert.equal(leak.statusCode, 500);
    assert.doesNotMatch(String(leak.body), /secret|password|select/);
  });
});
