// Database faults are classified by class (shared/core/db/errors.ts): connection failures and the SQLSTATE classes of a
// database that is not accepting work are `unavailable`, statements given up for load are `busy`, the rest is a 500.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { databaseFault, isDatabaseResuming, sqlState } from '#shared/core/db/errors.ts';

const pgError = (code: string, message = 'error') => Object.assign(new Error(message), { code });
const drizzle = (cause: unknown) => new Error('Failed query: select 1\nparams: ', { cause });
const systemError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, errno: -1, syscall });
const dataApi = (name: string, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 }, ...extra });
const alphanumeric = fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ');
const stateIn = (cls: string) =>
  fc.string({ unit: alphanumeric, minLength: 3, maxLength: 3 }).map((rest) => cls + rest);

test('SQLSTATE classes 08 and 53, 57P0x and 55000 are unavailable, through any wrapper, on every driver', () => {
  fc.assert(
    fc.property(fc.oneof(stateIn('08'), stateIn('53')), (state) => {
      assert.equal(databaseFault(drizzle(pgError(state))), 'unavailable');
      assert.equal(
        databaseFault(drizzle(dataApi('DatabaseErrorException', `ERROR: x; SQLState: ${state}`))),
        'unavailable',
      );
    }),
  );
  for (const state of ['57P01', '57P02', '57P03', '55000', '53300']) {
    assert.equal(databaseFault(drizzle(pgError(state))), 'unavailable', state);
  }
});

test('timeouts, lock timeouts, deadlocks and serialization failures are busy; other states are not faults', () => {
  for (const state of ['57014', '55P03', '40001', '40P01'])
    assert.equal(databaseFault(drizzle(pgError(state))), 'busy');
  assert.equal(databaseFault(dataApi('StatementTimeoutException', 'timed out')), 'busy');
  for (const state of ['23505', '42P01', '22P02', '42501', '25006', 'XX000', 'P0001']) {
    assert.equal(databaseFault(drizzle(pgError(state))), undefined, state);
  }
  assert.equal(
    databaseFault(drizzle(dataApi('DatabaseErrorException', 'ERROR: dup; SQLState: 23505'))),
    undefined,
  );
});

test('a socket that cannot be opened or is lost is unavailable, whatever its errno', () => {
  for (const [code, syscall] of [
    ['ECONNREFUSED', 'connect'],
    ['ECONNRESET', 'read'],
    ['ETIMEDOUT', 'connect'],
    ['ENOTFOUND', 'getaddrinfo'],
    ['EAI_AGAIN', 'getaddrinfo'],
    ['EHOSTUNREACH', 'connect'],
    ['EPIPE', 'write'],
  ] as const) {
    assert.equal(databaseFault(drizzle(systemError(code, syscall))), 'unavailable', code);
  }
  // node-postgres tries each address of a name and throws them together.
  assert.equal(
    databaseFault(
      new AggregateError([systemError('ECONNREFUSED', 'connect'), systemError('ECONNREFUSED', 'connect')]),
    ),
    'unavailable',
  );
  assert.equal(sqlState(systemError('EPIPE', 'write')), undefined, 'EPIPE is an errno, not a SQLSTATE');
  for (const message of [
    'Connection terminated unexpectedly',
    'timeout exceeded when trying to connect',
    'PGlite is closed',
  ]) {
    assert.equal(databaseFault(drizzle(new Error(message))), 'unavailable', message);
  }
});

test('the Data API: resuming, unavailable, throttled and any 5xx of the service are unavailable', () => {
  const resuming = dataApi(
    'DatabaseResumingException',
    'The Aurora DB instance is resuming after being auto-paused',
  );
  assert.equal(databaseFault(drizzle(resuming)), 'unavailable');
  assert.equal(isDatabaseResuming(drizzle(resuming)), true);
  assert.equal(databaseFault(dataApi('ThrottlingException', 'Rate exceeded')), 'unavailable');
  assert.equal(
    databaseFault(dataApi('SomethingNew', 'x', { $retryable: { throttling: true } })),
    'unavailable',
  );
  assert.equal(
    databaseFault(dataApi('SomethingNew', 'x', { $fault: 'server', $metadata: { httpStatusCode: 502 } })),
    'unavailable',
  );
  // A transaction whose connection died: the endpoint no longer knows its id when drizzle rolls it back.
  assert.equal(
    databaseFault(drizzle(dataApi('BadRequestException', 'Transaction AQID is not found'))),
    'unavailable',
  );
  assert.equal(databaseFault(dataApi('BadRequestException', 'Parameter x has an invalid value')), undefined);
  assert.equal(databaseFault(dataApi('ValidationException', 'bad parameter')), undefined);
  assert.equal(databaseFault(new TypeError("Cannot read properties of undefined (reading 'x')")), undefined);
});
