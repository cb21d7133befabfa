import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, invocationFields, rootLogger, setLogLevel, setLogSink } from '#shared/core/logger.ts';
import { randomSecret } from '#test/support/secrets.ts';

test('log lines are JSON with bindings, and secret-bearing keys are redacted at any depth', () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  // The default level, whatever a file before this one in the same process set.
  const prevLevel = setLogLevel('info');
  try {
    createLogger({ requestId: 'r-1' }).info('hello', {
      authorization: 'Bearer abc.def.ghi',
      body: {
        password: 'hunter2',
        mcps: [{ name: 'fs', command: 'npx', args: ['--token', 'x'], env: { KEY: 'v' } }],
      },
      jwt_secret: randomSecret(),
      status: 200,
    });
  } finally {
    setLogSink(prev);
    setLogLevel(prevLevel);
  }
  assert.equal(lines.length, 1);
  const record = JSON.parse(lines[0] as string);
  assert.equal(record.requestId, 'r-1');
  assert.equal(record.message, 'hello');
  assert.equal(record.level, 'INFO');
  assert.ok(!Number.isNaN(Date.parse(record.timestamp)));
  assert.equal(record.status, 200);
  for (const secret of ['abc.def.ghi', 'hunter2', 'npx', '--token', '"KEY"', 'xxxxxxxx']) {
    assert.equal(lines[0]!.includes(secret), false, `${secret} leaked`);
  }
  assert.equal(record.body.mcps[0].name, 'fs');
});

test('an invocation binds the Lambda context, cold_start (first only), the X-Ray root and correlation_id', () => {
  const lambda = {
    functionName: 'acp-requests-get',
    memoryLimitInMB: '512',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:acp-requests-get',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
  };
  const before = process.env._X_AMZN_TRACE_ID;
  process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
  try {
    const first = invocationFields(lambda, 'req-1');
    const second = invocationFields(lambda, 'req-2');
    // Other tests of this process may have invoked before: the first call here is cold only if none did.
    assert.equal(typeof first.cold_start, 'boolean');
    assert.equal(second.cold_start, false);
    assert.deepEqual(second, {
      cold_start: false,
      function_name: 'acp-requests-get',
      function_memory_size: 512,
      function_arn: lambda.invokedFunctionArn,
      function_request_id: lambda.awsRequestId,
      xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      correlation_id: 'req-2',
    });
  } finally {
    if (before === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = before;
  }
  assert.deepEqual(invocationFields(undefined, 'local-1'), { cold_start: false, correlation_id: 'local-1' });
});

test('the level set from the config drops less severe lines', () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const prevLevel = setLogLevel('warn');
  try {
    rootLogger.info('dropped');
    rootLogger.warn('kept');
    setLogLevel('debug');
    rootLogger.debug('kept too');
  } finally {
    setLogLevel(prevLevel);
    setLogSink(prev);
  }
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { level: string; message: string }).level),
    ['WARN', 'DEBUG'],
  );
});
