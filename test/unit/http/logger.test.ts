import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, setLogSink } from '#shared/http/logger.ts';

test('log lines are JSON with bindings, and secret-bearing keys are redacted at any depth', () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    createLogger({ requestId: 'r-1' }).info('hello', {
      authorization: 'Bearer abc.def.ghi',
      body: {
        password: 'hunter2',
        mcps: [{ name: 'fs', command: 'npx', args: ['--token', 'x'], env: { KEY: 'v' } }],
      },
      jwt_secret: 'x'.repeat(40),
      status: 200,
    });
  } finally {
    setLogSink(prev);
  }
  assert.equal(lines.length, 1);
  const record = JSON.parse(lines[0] as string);
  assert.equal(record.requestId, 'r-1');
  assert.equal(record.msg, 'hello');
  assert.equal(record.status, 200);
  for (const secret of ['abc.def.ghi', 'hunter2', 'npx', '--token', '"KEY"', 'xxxxxxxx']) {
    assert.equal(lines[0]!.includes(secret), false, `${secret} leaked`);
  }
  assert.equal(record.body.mcps[0].name, 'fs');
});
