// The RDS Data API test endpoint (test/support/data-api-server.ts), exercised through the real RDSDataClient and
// drizzle's aws-data-api/pg driver, against the PostgreSQL at TEST_DATABASE_URL. Run with TZ=UTC: drizzle parses the
// offset-less timestamptz strings of the Data API as local time.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  BatchExecuteStatementCommand,
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  type ExecuteStatementCommandInput,
  RDSDataClient,
  RollbackTransactionCommand,
} from '@aws-sdk/client-rds-data';
import { eq, sql, TransactionRollbackError } from 'drizzle-orm';
import { type AwsDataApiPgDatabase, drizzle } from 'drizzle-orm/aws-data-api/pg';
import {
  bigint,
  boolean,
  customType,
  integer,
  jsonb,
  numeric,
  pgSchema,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import pg from 'pg';
import { type DataApiServer, startDataApiServer } from '#test/support/data-api-server.ts';
import { driversUnderTest } from '#test/support/databases.ts';

const connectionString = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schemaName = `data_api_${randomBytes(4).toString('hex')}`;

// drizzle 0.45 has no bytea column, and its Data API driver cannot bind binary parameters: read as blobValue
// (a Uint8Array), write through SQL.
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });

const schema = pgSchema(schemaName);
const status = schema.enum('status', ['open', 'closed']);
const items = schema.table('items', {
  id: uuid('id').primaryKey(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  doc: jsonb('doc'),
  tags: text('tags').array(),
  counts: integer('counts').array(),
  big: bigint('big', { mode: 'number' }),
  amount: numeric('amount', { precision: 12, scale: 2 }),
  flag: boolean('flag'),
  note: text('note'),
  payload: bytea('payload'),
  status: status('status'),
});

function errorOf(err: unknown): { name: string; message: string; cause?: unknown } {
  assert.ok(err instanceof Error, `expected an Error, got ${String(err)}`);
  return err;
}

/** drizzle wraps driver errors in DrizzleQueryError; the SDK's exception is its cause. */
function sdkErrorOf(err: unknown): { name: string; message: string } {
  const outer = errorOf(err);
  return outer.cause === undefined ? outer : errorOf(outer.cause);
}

describe('RDS Data API test endpoint', () => {
  // The endpoint the data-api driver runs on: tested whenever that driver is (always in npm test).
  if (!driversUnderTest().includes('data-api')) return;
  let server: DataApiServer;
  let client: RDSDataClient;
  let db: AwsDataApiPgDatabase<Record<string, never>>;
  let admin: pg.Client;
  let target: { resourceArn: string; secretArn: string; database: string };

  const execute = (input: Omit<ExecuteStatementCommandInput, 'resourceArn' | 'secretArn'>) =>
    client.send(new ExecuteStatementCommand({ ...target, ...input }));

  before(async () => {
    admin = new pg.Client({ connectionString });
    await admin.connect();
    await admin.query(`create schema ${schemaName}`);
    await admin.query(`create type ${schemaName}.status as enum ('open', 'closed')`);
    await admin.query(`
      create table ${schemaName}.items (
        id uuid primary key,
        created_at timestamptz not null,
        doc jsonb,
        tags text[],
        counts integer[],
        big bigint,
        amount numeric(12, 2),
        flag boolean,
        note text,
        payload bytea,
        status ${schemaName}.status
      )`);
    await admin.query(`create table ${schemaName}.counters (id serial primary key, n integer not null)`);
    server = await startDataApiServer({ connectionString });
    client = new RDSDataClient({
      endpoint: server.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    target = { resourceArn: server.resourceArn, secretArn: server.secretArn, database: server.database };
    db = drizzle(client, target);
  });

  after(async () => {
    client?.destroy();
    await server?.close();
    await admin?.query(`drop schema if exists ${schemaName} cascade`);
    await admin?.end();
  });

  describe('values through drizzle', () => {
    const id = randomUUID();
    const createdAt = new Date('2024-01-02T03:04:05.123Z');

    before(async () => {
      await db.insert(items).values({
        id,
        createdAt,
        doc: { a: { b: [1, 'two', null] }, ok: true },
        tags: ['x', 'y z', 'with "quotes", commas'],
        counts: [3, 1, 2],
        big: Number.MAX_SAFE_INTEGER,
        amount: '1234.50',
        flag: true,
        note: null,
        payload: sql`decode(${'00ff10'}, 'hex')`,
      });
    });

    test('uuid, jsonb object, arrays, bigint, numeric, boolean, null and bytea come back as written', async () => {
      const [row] = await db.select().from(items).where(eq(items.id, id));
      assert.ok(row);
      assert.equal(row.id, id);
      assert.deepEqual(row.doc, { a: { b: [1, 'two', null] }, ok: true });
      assert.deepEqual(row.tags, ['x', 'y z', 'with "quotes", commas']);
      assert.deepEqual(row.counts, [3, 1, 2]);
      assert.equal(row.big, Number.MAX_SAFE_INTEGER);
      assert.equal(row.amount, '1234.50');
      assert.equal(row.flag, true);
      assert.equal(row.note, null);
      assert.deepEqual(row.payload && [...row.payload], [0x00, 0xff, 0x10]);
      assert.equal(row.status, null);
    });

    test('timestamptz keeps its instant (with TZ=UTC)', async (t) => {
      // The wire value is the UTC wall time without an offset, whatever the process time zone.
      const raw = await execute({
        sql: `select created_at from ${schemaName}.items where id = :id::uuid`,
        parameters: [{ name: 'id', value: { stringValue: id } }],
      });
      assert.deepEqual(raw.records, [[{ stringValue: '2024-01-02 03:04:05.123' }]]);
      if (new Date().getTimezoneOffset() !== 0) {
        t.skip('drizzle parses that value as local time: run with TZ=UTC');
        return;
      }
      const [row] = await db.select({ createdAt: items.createdAt }).from(items).where(eq(items.id, id));
      assert.equal(row?.createdAt.toISOString(), createdAt.toISOString());
    });

    test('a jsonb array round-trips, and updates bind typed parameters', async () => {
      await db
        .update(items)
        .set({ doc: ['a', { b: 2 }], note: 'noted', flag: false })
        .where(eq(items.id, id));
      const [row] = await db
        .select({ doc: items.doc, note: items.note, flag: items.flag })
        .from(items)
        .where(eq(items.id, id));
      assert.deepEqual(row, { doc: ['a', { b: 2 }], note: 'noted', flag: false });
    });

    test('an enum compared with an unhinted string parameter fails as on the real Data API', async () => {
      // drizzle sends no type hint for enums; the Data API binds the string as text.
      await assert.rejects(db.select().from(items).where(eq(items.status, 'open')), (err: unknown) => {
        const { name, message } = sdkErrorOf(err);
        assert.equal(name, 'DatabaseErrorException');
        assert.match(message, /^ERROR: operator does not exist: .*status = text/);
        assert.match(message, /; SQLState: 42883$/);
        return true;
      });
      // The documented way out: an explicit cast.
      const rows = await db
        .select({ id: items.id })
        .from(items)
        .where(sql`${items.status} = ${'open'}::${sql.raw(`${schemaName}.status`)}`);
      assert.deepEqual(rows, []);
    });
  });

  describe('values through the RDSDataClient', () => {
    test('Field unions for scalars, arrays and nulls', async () => {
      const result = await execute({
        sql: `select 1::int2 as i2, 2::int4 as i4, 9007199254740991::int8 as i8, 1.5::float4 as f4, 'NaN'::float8 as nan,
                     12.340::numeric as num, true as b, null::text as n, 'é'::varchar as v, '{"k": [1]}'::json as j,
                     '00000000-0000-4000-8000-000000000000'::uuid as u, '2024-02-29'::date as d, '13:14:15'::time as t,
                     '2024-01-02 03:04:05'::timestamp as ts, '2024-06-01 12:00:00+02'::timestamptz as tstz,
                     array['a', null, 'b c']::text[] as texts, array[1, 2]::int8[] as longs, array[true, false] as bools,
                     array[1.5, 2]::float8[] as doubles, array[[1, 2], [3, 4]] as nested, '{}'::text[] as empty`,
      });
      const fields = result.records?.[0];
      assert.ok(fields);
      const [nan] = fields.splice(4, 1);
      assert.ok(nan?.doubleValue !== undefined && Number.isNaN(nan.doubleValue));
      assert.deepEqual(fields, [
        { longValue: 1 },
        { longValue: 2 },
        { longValue: 9007199254740991 },
        { doubleValue: 1.5 },
        { stringValue: '12.340' },
        { booleanValue: true },
        { isNull: true },
        { stringValue: 'é' },
        { stringValue: '{"k": [1]}' },
        { stringValue: '00000000-0000-4000-8000-000000000000' },
        { stringValue: '2024-02-29' },
        { stringValue: '13:14:15' },
        { stringValue: '2024-01-02 03:04:05' },
        { stringValue: '2024-06-01 10:00:00' },
        { arrayValue: { stringValues: ['a', null, 'b c'] } },
        { arrayValue: { longValues: [1, 2] } },
        { arrayValue: { booleanValues: [true, false] } },
        { arrayValue: { doubleValues: [1.5, 2] } },
        { arrayValue: { arrayValues: [{ longValues: [1, 2] }, { longValues: [3, 4] }] } },
        { arrayValue: { stringValues: [] } },
      ]);
      assert.equal(result.numberOfRecordsUpdated, 0);
    });

    test('bytea parameters and results are blobs', async () => {
      const bytes = new Uint8Array([0, 1, 254, 255]);
      const result = await execute({
        sql: 'select :b as b, length(:b) as n',
        parameters: [{ name: 'b', value: { blobValue: bytes } }],
      });
      const [b, n] = result.records?.[0] ?? [];
      assert.deepEqual(b?.blobValue && [...b.blobValue], [...bytes]);
      assert.deepEqual(n, { longValue: 4 });
    });

    test('placeholders: hints as casts, repeated names, literals, comments, dollar quotes and :: left alone', async () => {
      const result = await execute({
        sql: `select :a as a, :a || '-' || :b as ab, ':a' as lit, :b as ":a", $$ :a $$ as dollar, :n::int4 + 1 as n,
                     pg_typeof(:ts)::text as ts_type, pg_typeof(:j)::text as j_type, :x as unhinted -- :a
                     /* :a */`,
        parameters: [
          { name: 'a', value: { stringValue: 'A' } },
          { name: 'b', value: { stringValue: 'B' } },
          { name: 'n', value: { longValue: 41 } },
          { name: 'ts', value: { stringValue: '2024-01-02 03:04:05.5' }, typeHint: 'TIMESTAMP' },
          { name: 'j', value: { stringValue: '[1]' }, typeHint: 'JSON' },
          { name: 'x', value: { isNull: true } },
        ],
        includeResultMetadata: true,
      });
      assert.deepEqual(
        result.columnMetadata?.map((c) => c.label),
        ['a', 'ab', 'lit', ':a', 'dollar', 'n', 'ts_type', 'j_type', 'unhinted'],
      );
      assert.deepEqual(result.records, [
        [
          { stringValue: 'A' },
          { stringValue: 'A-B' },
          { stringValue: ':a' },
          { stringValue: 'B' },
          { stringValue: ' :a ' },
          { longValue: 42 },
          { stringValue: 'timestamp without time zone' },
          { stringValue: 'jsonb' },
          { isNull: true },
        ],
      ]);
    });

    test('columnMetadata and formatRecordsAs JSON', async () => {
      const result = await execute({
        sql: `insert into ${schemaName}.counters (n) values (7) returning id, n, 'x' as label`,
        includeResultMetadata: true,
        formatRecordsAs: 'JSON',
      });
      assert.equal(result.records, undefined);
      assert.deepEqual(JSON.parse(result.formattedRecords ?? ''), [{ id: 1, n: 7, label: 'x' }]);
      const meta = result.columnMetadata ?? [];
      assert.deepEqual(
        meta.map((c) => [c.name, c.typeName, c.type, c.nullable, c.isAutoIncrement, c.tableName]),
        [
          ['id', 'serial', 4, 0, true, 'counters'],
          ['n', 'int4', 4, 0, false, 'counters'],
          ['label', 'text', 12, 1, false, ''],
        ],
      );
    });

    test('DML reports numberOfRecordsUpdated', async () => {
      const result = await execute({ sql: `update ${schemaName}.counters set n = n + 1` });
      assert.equal(result.numberOfRecordsUpdated, 1);
      assert.equal(result.records, undefined);
    });

    test('BatchExecute runs once per parameter set', async () => {
      const result = await client.send(
        new BatchExecuteStatementCommand({
          ...target,
          sql: `insert into ${schemaName}.counters (n) values (:n)`,
          parameterSets: [
            [{ name: 'n', value: { longValue: 100 } }],
            [{ name: 'n', value: { longValue: 200 } }],
          ],
        }),
      );
      assert.equal(result.updateResults?.length, 2);
      const sum = await execute({
        sql: `select sum(n)::int8 as s from ${schemaName}.counters where n >= 100`,
      });
      assert.deepEqual(sum.records, [[{ longValue: 300 }]]);
      const returning = await client.send(
        new BatchExecuteStatementCommand({
          ...target,
          sql: `insert into ${schemaName}.counters (n) values (:n) returning n`,
          parameterSets: [[{ name: 'n', value: { longValue: 5 } }]],
        }),
      );
      assert.deepEqual(returning.updateResults, [{ generatedFields: [{ longValue: 5 }] }]);
    });
  });

  describe('errors', () => {
    test('more than one statement per call is refused', async () => {
      await assert.rejects(execute({ sql: 'select 1; select 2' }), (err: unknown) => {
        const { name, message } = errorOf(err);
        assert.equal(name, 'BadRequestException');
        assert.match(message, /cannot insert multiple commands into a prepared statement/);
        return true;
      });
      await assert.rejects(db.execute(sql.raw(`select 1; select 2`)), (err: unknown) => {
        assert.equal(sdkErrorOf(err).name, 'BadRequestException');
        return true;
      });
      // A semicolon inside a literal, or a trailing one, is still one statement.
      const result = await execute({ sql: `select 'a;b' as s;` });
      assert.deepEqual(result.records, [[{ stringValue: 'a;b' }]]);
    });

    test('SQL errors carry the PostgreSQL message and the SQLSTATE', async () => {
      await assert.rejects(execute({ sql: 'select * from no_such_table' }), (err: unknown) => {
        const { name, message } = errorOf(err);
        assert.equal(name, 'DatabaseErrorException');
        assert.equal(
          message,
          'ERROR: relation "no_such_table" does not exist\n  Position: 15; SQLState: 42P01',
        );
        return true;
      });
    });

    test('type-hinted values must use the documented formats', async () => {
      await assert.rejects(
        execute({
          sql: 'select :t',
          parameters: [{ name: 't', value: { stringValue: '2024-01-02T03:04:05Z' }, typeHint: 'TIMESTAMP' }],
        }),
        { name: 'BadRequestException' },
      );
    });

    test('array parameters are not supported', async () => {
      await assert.rejects(
        execute({
          sql: 'select :a',
          parameters: [{ name: 'a', value: { arrayValue: { longValues: [1] } } }],
        }),
        { name: 'BadRequestException', message: 'Array parameters are not supported.' },
      );
    });

    test('DatabaseResumingException, raw and through drizzle, then the calls succeed again', async () => {
      server.failNextWithResuming(2);
      await assert.rejects(execute({ sql: 'select 1' }), (err: unknown) => {
        const { name, message } = errorOf(err);
        assert.equal(name, 'DatabaseResumingException');
        assert.match(message, /is resuming after being auto-paused/);
        return true;
      });
      await assert.rejects(db.execute(sql`select 1`), (err: unknown) => {
        assert.equal(sdkErrorOf(err).name, 'DatabaseResumingException');
        return true;
      });
      assert.deepEqual((await execute({ sql: 'select 1 as one' })).records, [[{ longValue: 1 }]]);
    });

    test('resumingFailures fails the first calls of a new endpoint', async () => {
      const paused = await startDataApiServer({ connectionString, resumingFailures: 1 });
      const pausedClient = new RDSDataClient({
        endpoint: paused.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      try {
        const input = { resourceArn: paused.resourceArn, secretArn: paused.secretArn, sql: 'select 1' };
        await assert.rejects(pausedClient.send(new ExecuteStatementCommand(input)), {
          name: 'DatabaseResumingException',
        });
        assert.ok(await pausedClient.send(new ExecuteStatementCommand(input)));
        assert.deepEqual(paused.calls, { Execute: 2 });
      } finally {
        pausedClient.destroy();
        await paused.close();
      }
    });
  });

  describe('transactions', () => {
    test('a drizzle transaction that commits', async () => {
      await db.transaction(async (tx) => {
        await tx.insert(items).values({ id: randomUUID(), createdAt: new Date(), note: 'committed' });
        await tx.update(items).set({ flag: true }).where(eq(items.note, 'committed'));
      });
      const rows = await db.select({ flag: items.flag }).from(items).where(eq(items.note, 'committed'));
      assert.deepEqual(rows, [{ flag: true }]);
    });

    test('a drizzle transaction that rolls back leaves no row', async () => {
      const id = randomUUID();
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.insert(items).values({ id, createdAt: new Date(), note: 'rolled back' });
          tx.rollback();
        }),
        TransactionRollbackError,
      );
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.insert(items).values({ id, createdAt: new Date(), note: 'rolled back' });
          await tx.execute(sql`select * from no_such_table`);
        }),
      );
      assert.deepEqual(await db.select().from(items).where(eq(items.id, id)), []);
    });

    test('a failed statement aborts the transaction, as in PostgreSQL', async () => {
      const { transactionId } = await client.send(new BeginTransactionCommand(target));
      await assert.rejects(execute({ sql: 'select 1/0', transactionId }), /division by zero/);
      await assert.rejects(
        execute({ sql: 'select 1', transactionId }),
        /current transaction is aborted.*25P02/,
      );
      await assert.rejects(
        client.send(new CommitTransactionCommand({ ...target, transactionId })),
        /ROLLBACK/,
      );
      // The transaction is gone either way.
      await assert.rejects(client.send(new RollbackTransactionCommand({ ...target, transactionId })), {
        name: 'BadRequestException',
        message: `Transaction ${transactionId} is not found`,
      });
    });

    test('commit and rollback report their status; unknown ids are refused', async () => {
      const begun = await client.send(new BeginTransactionCommand(target));
      const committed = await client.send(
        new CommitTransactionCommand({ ...target, transactionId: begun.transactionId }),
      );
      assert.equal(committed.transactionStatus, 'Transaction Committed');
      const again = await client.send(new BeginTransactionCommand(target));
      const rolledBack = await client.send(
        new RollbackTransactionCommand({ ...target, transactionId: again.transactionId }),
      );
      assert.equal(rolledBack.transactionStatus, 'Rollback Complete');
      await assert.rejects(execute({ sql: 'select 1', transactionId: 'no-such-transaction' }), {
        name: 'BadRequestException',
        message: 'Transaction no-such-transaction is not found',
      });
    });

    test('a second statement while one runs in the same transaction is refused', async () => {
      const { transactionId } = await client.send(new BeginTransactionCommand(target));
      const slow = execute({ sql: 'select pg_sleep(0.3)', transactionId });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await assert.rejects(execute({ sql: 'select 1', transactionId }), {
        name: 'DatabaseErrorException',
        message: 'Transaction is still running a query',
      });
      await slow;
      await client.send(new RollbackTransactionCommand({ ...target, transactionId }));
    });

    test('calls counts the round trips of each operation', async () => {
      server.resetCalls();
      await db.transaction(async (tx) => {
        await tx.select().from(items).limit(1);
        await tx.execute(sql`select 1`);
      });
      await db.select().from(items).limit(1);
      assert.deepEqual(server.calls, { BeginTransaction: 1, Execute: 3, CommitTransaction: 1 });
    });
  });
});
