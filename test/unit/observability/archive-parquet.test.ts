// The archive's Parquet form (shared/observability/archive/parquet.ts): every column round-trips through a real reader
// (hyparquet), nulls and microsecond timestamps included; a second reader (DuckDB) takes the times as instants in
// UTC (timestamptz) and finds min/max statistics in every row group; the same rows give the same bytes (a rerun
// rewrites an hour identically); an hour without rows is still a valid file; the keys are Hive-partitioned.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import {
  ARCHIVE_COLUMNS,
  type ArchivedEventRow,
  encodeEventsParquet,
  parquetInput,
  sha256Hex,
} from '#shared/observability/archive/parquet.ts';
import { hourDirectory, MANIFEST_NAME } from '#shared/observability/archive/store.ts';

const read = async (bytes: Uint8Array) =>
  (await parquetReadObjects({
    file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  })) as Array<Record<string, unknown>>;

const text = fc.string({ maxLength: 40 });
const maybe = fc.option(text, { nil: null });
const micros = fc.bigInt({ min: 1_000_000_000_000_000n, max: 2_000_000_000_000_000n }).map(String);
const row: fc.Arbitrary<ArchivedEventRow> = fc.record({
  id: fc.bigInt({ min: 1n, max: 2n ** 62n }).map(String),
  event_id: fc.option(fc.uuid(), { nil: null }),
  device_id: fc.uuid(),
  serial_number: text,
  source_ip: maybe,
  received_us: micros,
  event_us: micros,
  agent_type: text,
  mcp_name: text,
  tool: text,
  event_type: fc.constantFrom('invocation', 'result', 'error'),
  result: fc.constantFrom('allowed', 'denied', 'error'),
  deny_code: maybe,
  deny_reason: maybe,
  error_message: maybe,
  rule_applied: maybe,
  model: maybe,
  session_id: maybe,
  group_name: maybe,
  actor_email: maybe,
  tokens_in: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  tokens_out: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  duration_ms: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  skills: fc.json(),
  prompt: maybe,
  prompt_truncated: fc.boolean(),
  metadata: fc.json(),
});

test('every column round-trips through hyparquet, and the same rows give the same bytes', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(row, { maxLength: 30 }), async (rows) => {
      const bytes = encodeEventsParquet(rows);
      assert.equal(sha256Hex(encodeEventsParquet(rows)), sha256Hex(bytes), 'deterministic');
      const back = await read(bytes);
      assert.equal(back.length, rows.length);
      back.forEach((r, i) => {
        const source = rows[i]!;
        assert.deepEqual(
          Object.keys(r),
          ARCHIVE_COLUMNS.map((c) => c.name),
        );
        assert.equal(String(r.id), source.id);
        // TIMESTAMP_MICROS: hyparquet gives a Date (milliseconds); the microseconds are in the file.
        assert.equal((r.event_time as Date).getTime(), Math.floor(Number(source.event_us) / 1000));
        for (const c of ARCHIVE_COLUMNS.filter(
          (c) => c.kind === 'string' || c.kind === 'int' || c.kind === 'boolean',
        ))
          assert.equal(r[c.name] ?? null, c.value(source), c.name);
      });
    }),
    { numRuns: 40 },
  );
});

test("the bytes are those of hyparquet-writer's parquetWriteBuffer for the same input", () => {
  fc.assert(
    fc.property(fc.array(row, { maxLength: 30 }), (rows) => {
      const whole = new Uint8Array(parquetWriteBuffer(parquetInput(rows)));
      assert.equal(sha256Hex(encodeEventsParquet(rows)), sha256Hex(whole));
    }),
    { numRuns: 40 },
  );
});

test('DuckDB reads event_time and received_at as TIMESTAMP WITH TIME ZONE, exact to the microsecond, with min/max statistics', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-parquet-'));
  const duck = await DuckDBInstance.create(':memory:');
  const connection = await duck.connect();
  try {
    const rows = fc.sample(row, { numRuns: 25, seed: 7 });
    const file = join(dir, 'part-0000.parquet');
    writeFileSync(file, encodeEventsParquet(rows));
    // DuckDB reads a timestamp without the UTC flag (the legacy TIMESTAMP_MICROS alone) as TIMESTAMP, a wall clock.
    const described = await connection.runAndReadAll(
      `DESCRIBE SELECT event_time, received_at FROM read_parquet('${file}')`,
    );
    assert.deepEqual(
      described.getRowObjectsJson().map((r) => [r.column_name, r.column_type]),
      [
        ['event_time', 'TIMESTAMP WITH TIME ZONE'],
        ['received_at', 'TIMESTAMP WITH TIME ZONE'],
      ],
    );
    const schema = await connection.runAndReadAll(
      `SELECT name, logical_type FROM parquet_schema('${file}') WHERE name IN ('event_time', 'received_at')`,
    );
    for (const r of schema.getRowObjectsJson())
      assert.match(String(r.logical_type), /isAdjustedToUTC=1.*MICROS/, `${r.name}: ${r.logical_type}`);
    // The values, as microseconds since the epoch: exactly those of the rows.
    const values = await connection.runAndReadAll(
      `SELECT epoch_us(event_time)::VARCHAR AS event_us, epoch_us(received_at)::VARCHAR AS received_us
        FROM read_parquet('${file}')`,
    );
    assert.deepEqual(
      values.getRowObjectsJson(),
      rows.map((r) => ({ event_us: r.event_us, received_us: r.received_us })),
    );
    // Each row group's statistics: min and max of the column, and no nulls.
    const stats = await connection.runAndReadAll(
      `SELECT row_group_id, path_in_schema, epoch_us(stats_min_value::TIMESTAMPTZ)::VARCHAR AS min_us,
          epoch_us(stats_max_value::TIMESTAMPTZ)::VARCHAR AS max_us, stats_null_count
        FROM parquet_metadata('${file}') WHERE path_in_schema IN ('event_time', 'received_at')
        ORDER BY row_group_id, path_in_schema`,
    );
    const groups = stats.getRowObjectsJson();
    assert.equal(groups.length, 2, 'one row group, two columns');
    for (const g of groups) {
      const column = g.path_in_schema === 'event_time' ? 'event_us' : 'received_us';
      const micros = rows.map((r) => BigInt(r[column]));
      const min = micros.reduce((a, b) => (b < a ? b : a));
      const max = micros.reduce((a, b) => (b > a ? b : a));
      assert.deepEqual(
        [g.min_us, g.max_us, g.stats_null_count],
        [String(min), String(max), '0'],
        `${g.path_in_schema}: min and max in the row group's statistics`,
      );
    }
  } finally {
    connection.closeSync();
    duck.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an hour without rows is a valid, empty file', async () => {
  assert.deepEqual(await read(encodeEventsParquet([])), []);
});

test('keys: Hive partitions by UTC day and hour, the manifest named so that Athena skips it', () => {
  const hour = new Date('2026-08-01T05:00:00Z');
  assert.equal(hourDirectory('archive', hour), 'archive/events/dt=2026-08-01/hour=05');
  assert.equal(hourDirectory('', hour), 'events/dt=2026-08-01/hour=05');
  assert.ok(MANIFEST_NAME.startsWith('_'));
});
