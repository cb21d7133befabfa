import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDatabaseResuming } from '#shared/core/db/data-api-client.ts';
import { DsnError, describeDsn, parseDsn } from '#shared/core/db/dsn.ts';
import { isDatabaseUnavailable, sqlState } from '#shared/core/db/errors.ts';

test('DSN forms choose the driver', () => {
  assert.deepEqual(parseDsn(''), { kind: 'pglite', dataDir: './.data/pglite' });
  assert.deepEqual(parseDsn('pglite:memory'), { kind: 'pglite', dataDir: undefined });
  assert.deepEqual(parseDsn('pglite:/tmp/x'), { kind: 'pglite', dataDir: '/tmp/x' });
  assert.equal(parseDsn('postgres://a@b/c').kind, 'postgres');
  assert.equal(parseDsn('postgresql://a@b/c').kind, 'postgres');
  const arn = 'arn:aws:rds:eu-west-1:123456789012:cluster:acp';
  const secret = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:acp-db-AbCdEf';
  assert.deepEqual(
    parseDsn(`data-api://acp?resourceArn=${encodeURIComponent(arn)}&secretArn=${encodeURIComponent(secret)}`),
    {
      kind: 'data-api',
      database: 'acp',
      resourceArn: arn,
      secretArn: secret,
      region: undefined,
      endpoint: undefined,
    },
  );
  assert.throws(() => parseDsn('data-api://acp?resourceArn=x'), DsnError);
  assert.throws(() => parseDsn('mysql://x'), DsnError);
});

test('DSN descriptions never carry the password', () => {
  const text = describeDsn(parseDsn('postgres://app:s3cret-pass@db.internal:5432/acp'));
  assert.equal(text.includes('s3cret'), false);
  assert.match(text, /db\.internal:5432\/acp/);
});

test('connection failures are recognised through wrappers; SQL errors are not', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  assert.equal(isDatabaseUnavailable(new Error('Failed query', { cause: refused })), true);
  assert.equal(
    isDatabaseUnavailable(Object.assign(new Error('terminating connection'), { code: '57P01' })),
    true,
  );
  const resuming = Object.assign(new Error('resuming'), { name: 'DatabaseResumingException' });
  assert.equal(isDatabaseResuming(new Error('wrapped', { cause: resuming })), true);
  assert.equal(isDatabaseUnavailable(resuming), true);
  const syntax = Object.assign(new Error('syntax error at or near "x"'), { code: '42601' });
  assert.equal(isDatabaseUnavailable(new Error('Failed query', { cause: syntax })), false);
});

test('the SQLSTATE of a failed statement is found on every driver', () => {
  // node-postgres and PGlite: a code on the driver error, wrapped by drizzle.
  assert.equal(
    sqlState(new Error('Failed query', { cause: Object.assign(new Error('dup'), { code: '23505' }) })),
    '23505',
  );
  // The Data API: only inside the message of DatabaseErrorException (or BadRequestException on v1).
  const dataApi = Object.assign(
    new Error(
      'ERROR: duplicate key value violates unique constraint "users_email_key"\n  Detail: ...; SQLState: 23505',
    ),
    { name: 'DatabaseErrorException' },
  );
  assert.equal(sqlState(new Error('Failed query', { cause: dataApi })), '23505');
  // The same text in another error class is not a database answer.
  assert.equal(sqlState(Object.assign(new Error('SQLState: 23505'), { name: 'TypeError' })), undefined);
  assert.equal(sqlState(new Error('no state')), undefined);
});
