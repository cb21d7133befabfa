// The Parquet form of archived events: one file per hour, rows ordered by (event_time, id), every column of
// observability_events but ingest_xid (a transaction id, meaningless outside the database). Timestamps are instants
// in microseconds (PostgreSQL's precision, exact), annotated as the TIMESTAMP logical type adjusted to UTC, so that
// readers take them as timestamptz and not as a wall clock without a zone; each row group carries min/max statistics,
// so a reader skips files by time. jsonb columns are JSON text. The Glue table of the stack
// (infra/constructs/event-archive.ts) declares the same columns from ARCHIVE_COLUMNS.
import { createHash } from 'node:crypto';
import { col, type RowOf } from '../../core/db/query.ts';
import { encodeParquet } from '../../core/parquet.ts';

/** Raised when the columns below change incompatibly: it is written into every manifest. */
export const ARCHIVE_SCHEMA_VERSION = 1;

/** One event as the archive reads it from the database: text, integers and booleans (the same on every driver). */
export const ARCHIVED_EVENT_ROW = {
  id: col.text,
  event_id: col.nullable(col.text),
  device_id: col.text,
  serial_number: col.text,
  source_ip: col.nullable(col.text),
  /** Microseconds since the epoch, as text (exact). */
  received_us: col.text,
  event_us: col.text,
  agent_type: col.text,
  mcp_name: col.text,
  tool: col.text,
  event_type: col.text,
  result: col.text,
  deny_code: col.nullable(col.text),
  deny_reason: col.nullable(col.text),
  error_message: col.nullable(col.text),
  rule_applied: col.nullable(col.text),
  model: col.nullable(col.text),
  session_id: col.nullable(col.text),
  group_name: col.nullable(col.text),
  actor_email: col.nullable(col.text),
  tokens_in: col.number,
  tokens_out: col.number,
  duration_ms: col.number,
  skills: col.text,
  prompt: col.nullable(col.text),
  prompt_truncated: col.bool,
  metadata: col.text,
};
export type ArchivedEventRow = RowOf<typeof ARCHIVED_EVENT_ROW>;

type ColumnKind = 'bigint' | 'string' | 'timestamp' | 'int' | 'boolean';

/** The archive's columns: Parquet name, kind (Glue type below), nullable, and how a row gives its value. */
export const ARCHIVE_COLUMNS: ReadonlyArray<{
  name: string;
  kind: ColumnKind;
  nullable: boolean;
  value: (row: ArchivedEventRow) => string | number | bigint | boolean | null;
}> = [
  { name: 'id', kind: 'bigint', nullable: false, value: (r) => BigInt(r.id) },
  { name: 'event_id', kind: 'string', nullable: true, value: (r) => r.event_id },
  { name: 'device_id', kind: 'string', nullable: false, value: (r) => r.device_id },
  { name: 'serial_number', kind: 'string', nullable: false, value: (r) => r.serial_number },
  { name: 'source_ip', kind: 'string', nullable: true, value: (r) => r.source_ip },
  { name: 'received_at', kind: 'timestamp', nullable: false, value: (r) => BigInt(r.received_us) },
  { name: 'event_time', kind: 'timestamp', nullable: false, value: (r) => BigInt(r.event_us) },
  { name: 'agent_type', kind: 'string', nullable: false, value: (r) => r.agent_type },
  { name: 'mcp_name', kind: 'string', nullable: false, value: (r) => r.mcp_name },
  { name: 'tool', kind: 'string', nullable: false, value: (r) => r.tool },
  { name: 'event_type', kind: 'string', nullable: false, value: (r) => r.event_type },
  { name: 'result', kind: 'string', nullable: false, value: (r) => r.result },
  { name: 'deny_code', kind: 'string', nullable: true, value: (r) => r.deny_code },
  { name: 'deny_reason', kind: 'string', nullable: true, value: (r) => r.deny_reason },
  { name: 'error_message', kind: 'string', nullable: true, value: (r) => r.error_message },
  { name: 'rule_applied', kind: 'string', nullable: true, value: (r) => r.rule_applied },
  { name: 'model', kind: 'string', nullable: true, value: (r) => r.model },
  { name: 'session_id', kind: 'string', nullable: true, value: (r) => r.session_id },
  { name: 'group_name', kind: 'string', nullable: true, value: (r) => r.group_name },
  { name: 'actor_email', kind: 'string', nullable: true, value: (r) => r.actor_email },
  { name: 'tokens_in', kind: 'int', nullable: false, value: (r) => Number(r.tokens_in) },
  { name: 'tokens_out', kind: 'int', nullable: false, value: (r) => Number(r.tokens_out) },
  { name: 'duration_ms', kind: 'int', nullable: false, value: (r) => Number(r.duration_ms) },
  { name: 'skills', kind: 'string', nullable: false, value: (r) => r.skills },
  { name: 'prompt', kind: 'string', nullable: true, value: (r) => r.prompt },
  { name: 'prompt_truncated', kind: 'boolean', nullable: false, value: (r) => r.prompt_truncated },
  { name: 'metadata', kind: 'string', nullable: false, value: (r) => r.metadata },
];

/** Each kind as a Glue (Hive) column type. */
export const GLUE_TYPES: Readonly<Record<ColumnKind, string>> = {
  bigint: 'bigint',
  string: 'string',
  timestamp: 'timestamp',
  int: 'int',
  boolean: 'boolean',
};

const PARQUET_TYPES = {
  bigint: { type: 'INT64' },
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  // The logical type says UTC-adjusted; the legacy converted type, which means the same, is kept for older readers.
  timestamp: {
    type: 'INT64',
    converted_type: 'TIMESTAMP_MICROS',
    logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
  },
  int: { type: 'INT32' },
  boolean: { type: 'BOOLEAN' },
} as const;

/** What the writer is given for `rows`: the columns, the schema, one row group with statistics, and the creator. */
export function parquetInput(rows: readonly ArchivedEventRow[]) {
  return {
    columnData: ARCHIVE_COLUMNS.map((c) => ({
      name: c.name,
      data: rows.map((r) => c.value(r)),
      nullable: c.nullable,
    })),
    schema: [
      { name: 'root', num_children: ARCHIVE_COLUMNS.length },
      ...ARCHIVE_COLUMNS.map((c) => ({
        name: c.name,
        ...PARQUET_TYPES[c.kind],
        repetition_type: c.nullable ? ('OPTIONAL' as const) : ('REQUIRED' as const),
      })),
    ],
    rowGroupSize: Math.max(1, rows.length),
    statistics: true,
    createdBy: `agent-control-plane event archive v${ARCHIVE_SCHEMA_VERSION}`,
  };
}

/**
 * The rows as one Parquet file (Snappy-compressed, one row group): the same rows give the same bytes, since the
 * rows come in a fixed order; the bytes are those of `parquetWriteBuffer` (test/unit/observability/archive-parquet.test.ts).
 */
export function encodeEventsParquet(rows: readonly ArchivedEventRow[]): Uint8Array {
  return encodeParquet(parquetInput(rows));
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
