// The health check's answer when the database does not answer: 503 with the report, and Retry-After as every 503 of
// the service has (the OpenAPI document promises it on each).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Context as LambdaContext } from 'aws-lambda';
import { handler } from '#functions/health/healthcheck.ts';
import type { Db } from '#shared/core/db/database.ts';
import type { HttpEvent } from '#shared/core/http/context.ts';
import { type LogSink, setLogSink } from '#shared/core/logger.ts';
import { createRuntime, type Runtime, setRuntime } from '#shared/core/runtime.ts';
import { type ProvisionedDatabase, provisionDatabase } from '#test/support/databases.ts';
import { testConfig } from '#test/support/service.ts';

let database: ProvisionedDatabase;
let runtime: Runtime;
let sink: LogSink;
before(async () => {
  // The suite's migrated PGlite template, copied: cheaper to open than a new in-memory database.
  database = await provisionDatabase('pglite');
  runtime = await createRuntime(testConfig({ db: { dsn: database.dsn } }));
  sink = setLogSink(() => {});
});
after(async () => {
  setLogSink(sink);
  setRuntime(undefined);
  await runtime?.database.close();
  await database?.cleanup();
});

const event = {
  version: '2.0',
  routeKey: 'GET /v1/healthcheck',
  rawPath: '/v1/healthcheck',
  rawQueryString: '',
  headers: {},
  requestContext: {
    requestId: 'gw-1',
    http: { method: 'GET', path: '/v1/healthcheck', sourceIp: '203.0.113.9' },
  },
  isBase64Encoded: false,
} as unknown as HttpEvent;

const check = async () =>
  (await handler(event, {} as LambdaContext)) as {
    statusCode: number;
    headers: Record<string, string>;
    body: string;
  };

test('503 with Retry-After while the database does not answer; 200 without it once it does', async () => {
  const down = { execute: () => Promise.reject(new Error('connect ECONNREFUSED')) } as unknown as Db;
  setRuntime({ ...runtime, database: { ...runtime.database, db: down } });
  const unavailable = await check();
  assert.equal(unavailable.statusCode, 503);
  assert.equal(unavailable.headers['retry-after'], '5');
  assert.equal((JSON.parse(unavailable.body) as { status: string }).status, 'unavailable');

  setRuntime(runtime);
  const ok = await check();
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.headers['retry-after'], undefined);
});
