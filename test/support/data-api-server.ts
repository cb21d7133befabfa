// An RDS Data API endpoint for tests, executing on a real PostgreSQL.
//
// Point the real RDSDataClient at it (`endpoint: server.url`, region us-east-1, any static credentials) and drizzle's
// `drizzle-orm/aws-data-api/pg` driver on top of that client: requests go through the SDK's own serializers and
// error deserializers, so what a test sees is what production code sees from Aurora. The file also documents how the
// real Data API (Aurora PostgreSQL, Serverless v2 / provisioned generation) behaves; where that behaviour is a guess
// rather than observed, the comment says so.
//
// Reproduced on purpose:
// - REST-JSON operations POST /Execute, /BatchExecute, /BeginTransaction, /CommitTransaction, /RollbackTransaction;
//   errors as HTTP 4xx/5xx with an `x-amzn-errortype` header and a `{"message"}` body, which is how the SDK's
//   AwsRestJsonProtocol finds the error class (header first, then `code`, then `__type`).
// - `:name` placeholders; parameters typed the way the Data API types them (unhinted strings are text, so comparing an
//   enum column with a string parameter fails with `operator does not exist: x = text`); type hints as casts.
// - One statement per call, enforced by PostgreSQL itself (extended protocol refuses several commands).
// - Results as Field unions: timestamptz as a UTC string without an offset, numeric as a string, int8 as a (lossy)
//   JSON number, bytea as base64, arrays as arrayValue; formatRecordsAs JSON; columnMetadata; 1 MiB response limit.
// - SQL errors as DatabaseErrorException whose message is `ERROR: <message>[\n  Hint: ..][\n  Position: n];
//   SQLState: <code>`: the SQLSTATE reaches the caller only inside that message.
// - Transactions on a dedicated connection, a second call on a busy transaction refused ("Transaction is still
//   running a query"), unknown ids refused ("Transaction <id> is not found"), 3 minutes idle timeout.
// - DatabaseResumingException on demand (Aurora Serverless v2 resuming from zero capacity), which the SDK does not retry,
//   and ThrottlingException on demand, which it does.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomTypesConfig, FieldDef, PoolClient } from 'pg';
import pg from 'pg';

export interface DataApiServerOptions {
  /** The PostgreSQL the statements run on; its database is used whatever `database` the requests name. */
  connectionString: string;
  /** Answer the first n calls with DatabaseResumingException, as a paused cluster does. */
  resumingFailures?: number;
  /**
   * The error class of failed SQL statements. The current Data API (Serverless v2 / provisioned) answers
   * DatabaseErrorException; the Aurora Serverless v1 Data API answered BadRequestException.
   */
  statementErrorName?: 'DatabaseErrorException' | 'BadRequestException';
}

export interface DataApiServer {
  /** `http://127.0.0.1:<port>`, for `new RDSDataClient({ endpoint })`. */
  url: string;
  close(): Promise<void>;
  /**
   * Requests received per operation, keyed by the operation's path: Execute, BatchExecute, BeginTransaction,
   * CommitTransaction, RollbackTransaction. Every HTTP round trip counts, including the ones answered with an error.
   */
  calls: Record<string, number>;
  /** Empties `calls` in place (references to the object stay valid). */
  resetCalls(): void;
  /** The next n calls (of any operation) fail with DatabaseResumingException and do nothing. */
  failNextWithResuming(n: number): void;
  /** The next n calls fail with ThrottlingException ("Rate exceeded"), which the SDK retries, and do nothing. */
  failNextWithThrottling(n: number): void;
  /** ARNs and database name to use in requests; any non-empty ARN is accepted. */
  secretArn: string;
  resourceArn: string;
  database: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Wire shapes (see node_modules/@aws-sdk/client-rds-data/dist-es/schemas/schemas_0.js)

type ArrayValue =
  | { stringValues: (string | null)[] }
  | { longValues: (number | null)[] }
  | { doubleValues: (number | null)[] }
  | { booleanValues: (boolean | null)[] }
  | { arrayValues: ArrayValue[] };

type Field =
  | { isNull: true }
  | { stringValue: string }
  | { longValue: number }
  | { doubleValue: number }
  | { booleanValue: boolean }
  | { blobValue: string }
  | { arrayValue: ArrayValue };

interface ColumnMetadata {
  name: string;
  label: string;
  type: number;
  typeName: string;
  schemaName: string;
  tableName: string;
  isAutoIncrement: boolean;
  isSigned: boolean;
  isCurrency: boolean;
  isCaseSensitive: boolean;
  nullable: number;
  precision: number;
  scale: number;
  arrayBaseColumnType: number;
}

type JsonObject = Record<string, unknown>;

/** An error the endpoint answers with; `name` is the Data API error type the SDK turns into an exception class. */
class DataApiError extends Error {
  readonly status: number;
  constructor(name: string, status: number, message: string) {
    super(message);
    this.name = name;
    this.status = status;
  }
}

const badRequest = (message: string) => new DataApiError('BadRequestException', 400, message);

// The real service sends the Coral namespace after the type; the SDK strips everything from the first ':'.
const ERROR_TYPE_SUFFIX = ':http://internal.amazon.com/coral/com.amazonaws.rdsdataservice/';

const MAX_RESPONSE_BYTES = 1024 * 1024;
// "A transaction times out if no calls use its transaction ID in three minutes" (BeginTransaction API reference).
const TRANSACTION_IDLE_TIMEOUT_MS = 3 * 60 * 1000;

const OPERATIONS = new Set([
  'Execute',
  'BatchExecute',
  'BeginTransaction',
  'CommitTransaction',
  'RollbackTransaction',
]);

// ---------------------------------------------------------------------------------------------------------------
// Request parsing

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requiredString(body: JsonObject, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '') throw badRequest(`${key} is required`);
  return value;
}

function optionalString(body: JsonObject, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badRequest(`${key} must be a string`);
  return value;
}

/** A parameter ready for pg: its value and the cast that gives it the type the Data API would bind it with. */
interface BoundParameter {
  value: string | Buffer | null;
  cast: string;
}

const HINT_CASTS: Record<string, string> = {
  JSON: '::jsonb',
  UUID: '::uuid',
  TIMESTAMP: '::timestamp',
  DATE: '::date',
  TIME: '::time',
  DECIMAL: '::numeric',
};

// The formats the TypeHint documentation accepts ("YYYY-MM-DD HH:MM:SS[.FFF]" etc.). PostgreSQL itself would also
// take ISO 8601 with a 'T' and an offset; the Data API does not, so neither does this endpoint.
const HINT_FORMATS: Record<string, RegExp> = {
  TIMESTAMP: /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?$/,
  DATE: /^\d{4}-\d{2}-\d{2}$/,
  TIME: /^\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?$/,
};

function parseParameter(raw: unknown): [string, BoundParameter] {
  if (!isRecord(raw)) throw badRequest('Each parameter must be an object');
  const name = raw.name;
  if (typeof name !== 'string' || name === '') throw badRequest('Parameter name is required');
  const hint = raw.typeHint ?? undefined;
  if (hint !== undefined && (typeof hint !== 'string' || !(hint in HINT_CASTS))) {
    throw badRequest(`Invalid typeHint for parameter ${name}: ${String(hint)}`);
  }
  const value = raw.value;
  const entries = isRecord(value)
    ? Object.entries(value).filter(([, v]) => v !== undefined && v !== null)
    : [];
  const [entry] = entries;
  if (!entry || entries.length > 1) throw badRequest(`Parameter ${name} must have exactly one value`);
  const [kind, v] = entry;
  const hinted = hint === undefined ? undefined : HINT_CASTS[hint];
  switch (kind) {
    case 'isNull':
      if (v !== true) break;
      // An untyped NULL: PostgreSQL infers its type from the context, unless a hint says otherwise.
      return [name, { value: null, cast: hinted ?? '' }];
    case 'stringValue': {
      if (typeof v !== 'string') break;
      if (hint === undefined) return [name, { value: v, cast: '::text' }];
      const format = HINT_FORMATS[hint];
      if (format && !format.test(v)) {
        throw badRequest(
          `Parameter ${name}: invalid ${hint} value '${v}'; the accepted format is documented on TypeHint`,
        );
      }
      return [name, { value: v, cast: hinted ?? '' }];
    }
    // Numbers, booleans and blobs are bound with their own types; a hint only applies to strings.
    case 'longValue':
      if (typeof v !== 'number' || !Number.isInteger(v)) break;
      return [name, { value: BigInt(v).toString(), cast: '::int8' }];
    case 'doubleValue':
      // The SDK sends NaN and infinities as the strings "NaN", "Infinity", "-Infinity".
      if (typeof v !== 'number' && !(typeof v === 'string' && /^(?:NaN|-?Infinity)$/.test(v))) break;
      return [name, { value: String(v), cast: '::float8' }];
    case 'booleanValue':
      if (typeof v !== 'boolean') break;
      return [name, { value: String(v), cast: '::bool' }];
    case 'blobValue':
      if (typeof v !== 'string') break;
      return [name, { value: Buffer.from(v, 'base64'), cast: '::bytea' }];
    case 'arrayValue':
      throw badRequest('Array parameters are not supported.');
  }
  throw badRequest(`Parameter ${name} has an invalid value`);
}

function parseParameters(raw: unknown): Map<string, BoundParameter> {
  const parameters = new Map<string, BoundParameter>();
  if (raw === undefined || raw === null) return parameters;
  if (!Array.isArray(raw)) throw badRequest('parameters must be a list');
  for (const item of raw) {
    const [name, parameter] = parseParameter(item);
    if (!parameters.has(name)) parameters.set(name, parameter);
  }
  return parameters;
}

// ---------------------------------------------------------------------------------------------------------------
// `:name` placeholders → `$n` with casts

const NAME_CHAR = /[A-Za-z0-9_]/;
const IDENT_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** End index (exclusive) of the quoted token that starts at `start`; `''`/`""` are escaped quotes. */
function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i];
    if (backslashEscapes && ch === '\\') i += 2;
    else if (ch === quote && sql[i + 1] === quote) i += 2;
    else if (ch === quote) return i + 1;
    else i++;
  }
  return sql.length;
}

function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

/**
 * Rewrites `:name` placeholders to `$n<cast>` for the extended protocol, leaving string literals, quoted identifiers,
 * comments, dollar-quoted bodies and `::` casts alone. A `:name` that names no parameter is left as written (so
 * PostgreSQL reports it), as are parameters the statement does not use.
 */
export function bindNamedParameters(
  sql: string,
  parameters: Map<string, BoundParameter>,
): { text: string; values: (string | Buffer | null)[] } {
  const values: (string | Buffer | null)[] = [];
  const positions = new Map<string, number>();
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] ?? '';
    const prev = i > 0 ? (sql[i - 1] ?? '') : '';
    let end = i + 1;
    if (ch === "'") {
      // E'...' strings take backslash escapes; with standard_conforming_strings (the default) others do not.
      const escaped = (prev === 'E' || prev === 'e') && !IDENT_CHAR.test(sql[i - 2] ?? '');
      end = endOfQuoted(sql, i, "'", escaped);
    } else if (ch === '"') {
      end = endOfQuoted(sql, i, '"', false);
    } else if (ch === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      end = newline === -1 ? sql.length : newline;
    } else if (ch === '/' && sql[i + 1] === '*') {
      end = endOfBlockComment(sql, i);
    } else if (ch === '$' && !IDENT_CHAR.test(prev)) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql)?.[0];
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length);
        end = close === -1 ? sql.length : close + tag.length;
      }
    } else if (ch === ':' && sql[i + 1] === ':') {
      end = i + 2;
    } else if (ch === ':') {
      let nameEnd = i + 1;
      while (nameEnd < sql.length && NAME_CHAR.test(sql[nameEnd] ?? '')) nameEnd++;
      const name = sql.slice(i + 1, nameEnd);
      const parameter = name ? parameters.get(name) : undefined;
      if (parameter) {
        let position = positions.get(name);
        if (position === undefined) {
          values.push(parameter.value);
          position = values.length;
          positions.set(name, position);
        }
        out += `$${position}${parameter.cast}`;
        i = nameEnd;
        continue;
      }
    }
    out += sql.slice(i, end);
    i = end;
  }
  return { text: out, values };
}

// ---------------------------------------------------------------------------------------------------------------
// Types and values

/** How a column's values are returned. */
type ScalarKind = 'long' | 'double' | 'bool' | 'blob' | 'timestamptz' | 'numeric' | 'string';
type ColumnKind = { array: false; kind: ScalarKind } | { array: true; kind: ScalarKind };

interface TypeInfo {
  name: string;
  /** pg_type.typcategory: 'A' for arrays. */
  category: string;
  /** Element type of an array type. */
  elem: number;
  /** pg_type.typtype ('b' base, 'd' domain, 'e' enum, ...). */
  typtype: string;
  /** Base type of a domain. */
  base: number;
}

const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  oid: 26,
  float4: 700,
  float8: 701,
  money: 790,
  timestamptz: 1184,
  numeric: 1700,
} as const;

// Built-in scalar and array types, so that ordinary results need no catalog lookup. [oid, name, element oid].
const BUILTIN_TYPES: [number, string, number][] = [
  [16, 'bool', 0],
  [17, 'bytea', 0],
  [18, 'char', 0],
  [19, 'name', 0],
  [20, 'int8', 0],
  [21, 'int2', 0],
  [23, 'int4', 0],
  [25, 'text', 0],
  [26, 'oid', 0],
  [114, 'json', 0],
  [142, 'xml', 0],
  [650, 'cidr', 0],
  [700, 'float4', 0],
  [701, 'float8', 0],
  [705, 'unknown', 0],
  [790, 'money', 0],
  [829, 'macaddr', 0],
  [869, 'inet', 0],
  [1042, 'bpchar', 0],
  [1043, 'varchar', 0],
  [1082, 'date', 0],
  [1083, 'time', 0],
  [1114, 'timestamp', 0],
  [1184, 'timestamptz', 0],
  [1186, 'interval', 0],
  [1266, 'timetz', 0],
  [1560, 'bit', 0],
  [1562, 'varbit', 0],
  [1700, 'numeric', 0],
  [2950, 'uuid', 0],
  [3802, 'jsonb', 0],
  [199, '_json', 114],
  [1000, '_bool', 16],
  [1001, '_bytea', 17],
  [1002, '_char', 18],
  [1003, '_name', 19],
  [1005, '_int2', 21],
  [1007, '_int4', 23],
  [1009, '_text', 25],
  [1014, '_bpchar', 1042],
  [1015, '_varchar', 1043],
  [1016, '_int8', 20],
  [1021, '_float4', 700],
  [1022, '_float8', 701],
  [1028, '_oid', 26],
  [1115, '_timestamp', 1114],
  [1182, '_date', 1082],
  [1183, '_time', 1083],
  [1185, '_timestamptz', 1184],
  [1187, '_interval', 1186],
  [1231, '_numeric', 1700],
  [2951, '_uuid', 2950],
  [3807, '_jsonb', 3802],
];

/** pg's text values, untouched: this endpoint formats every value itself, by column type. */
const RAW_TEXT_TYPES = {
  getTypeParser: () => (value: string) => value,
} as unknown as CustomTypesConfig;

class TypeCatalog {
  private readonly types = new Map<number, TypeInfo>();

  constructor() {
    for (const [oid, name, elem] of BUILTIN_TYPES) {
      this.types.set(oid, { name, elem, category: elem ? 'A' : '', typtype: 'b', base: 0 });
    }
  }

  /** Loads the types (and their element and base types) this endpoint has not seen yet, e.g. enums and domains. */
  async load(client: PoolClient, oids: Iterable<number>): Promise<void> {
    let missing = [...new Set(oids)].filter((oid) => oid && !this.types.has(oid));
    while (missing.length > 0) {
      // Every value arrives as text (RAW_TEXT_TYPES).
      const result = await client.query<{
        oid: string;
        typname: string;
        typcategory: string;
        typelem: string;
        typtype: string;
        typbasetype: string;
      }>(
        'select oid, typname, typcategory, typelem, typtype, typbasetype from pg_type where oid = any($1::oid[])',
        [missing],
      );
      for (const row of result.rows) {
        this.types.set(Number(row.oid), {
          name: row.typname,
          category: row.typcategory,
          elem: Number(row.typelem),
          typtype: row.typtype,
          base: Number(row.typbasetype),
        });
      }
      for (const oid of missing) {
        // A type that vanished meanwhile: remember it as an unknown base type so the loop ends.
        if (!this.types.has(oid))
          this.types.set(oid, { name: 'unknown', category: '', elem: 0, typtype: 'b', base: 0 });
      }
      const related = missing.flatMap((oid) => {
        const info = this.types.get(oid);
        return info ? [info.elem, info.base] : [];
      });
      missing = [...new Set(related)].filter((oid) => oid && !this.types.has(oid));
    }
  }

  info(oid: number): TypeInfo | undefined {
    return this.types.get(oid);
  }

  /** Domains are returned as their base type. */
  private resolveDomain(oid: number): number {
    let current = oid;
    for (let depth = 0; depth < 10; depth++) {
      const info = this.types.get(current);
      if (info?.typtype !== 'd' || !info.base) return current;
      current = info.base;
    }
    return current;
  }

  columnKind(oid: number): ColumnKind {
    const resolved = this.resolveDomain(oid);
    const info = this.types.get(resolved);
    if (info && info.category === 'A' && info.elem) {
      return { array: true, kind: scalarKind(this.resolveDomain(info.elem)) };
    }
    return { array: false, kind: scalarKind(resolved) };
  }
}

function scalarKind(oid: number): ScalarKind {
  switch (oid) {
    case OID.int2:
    case OID.int4:
    case OID.int8:
    case OID.oid:
      return 'long';
    case OID.float4:
    case OID.float8:
      return 'double';
    case OID.bool:
      return 'bool';
    case OID.bytea:
      return 'blob';
    case OID.timestamptz:
      return 'timestamptz';
    case OID.numeric:
      return 'numeric';
    default:
      // text, varchar, uuid, json(b), date, time, timestamp, interval, enums, ...: PostgreSQL's text output.
      return 'string';
  }
}

const TIMESTAMPTZ =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d+)?([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/;

/**
 * The Data API returns timestamptz in UTC without an offset ("2024-01-02 03:04:05.123"); drizzle then parses that
 * as local time, hence TZ=UTC everywhere. Sessions here run in UTC, so the offset is normally +00 and is dropped;
 * after a `SET TIME ZONE` the value is converted back to UTC first.
 */
function utcTimestamp(raw: string): string {
  const m = TIMESTAMPTZ.exec(raw);
  if (!m) return raw; // infinity, -infinity
  const [, year = '', month = '', day = '', hour = '', minute = '', second = ''] = m;
  const fraction = m[7] ?? '';
  const sign = m[8] === '-' ? -1 : 1;
  const era = m[12] ?? '';
  const offsetSeconds = sign * (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0));
  if (offsetSeconds === 0 || era || year.length > 4) {
    return `${year}-${month}-${day} ${hour}:${minute}:${second}${fraction}${era}`;
  }
  const utc = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 19xx.
  utc.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  utc.setUTCHours(Number(hour), Number(minute), Number(second) - offsetSeconds, 0);
  const iso = utc.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}`;
}

/** How numbers come back: `resultSetOptions` of ExecuteStatement. */
interface ResultOptions {
  /** decimalReturnType DOUBLE_OR_LONG: numeric as longValue/doubleValue instead of stringValue. */
  decimalAsNumber: boolean;
  /** longReturnType STRING: integers as stringValue. */
  longAsString: boolean;
}

type Scalar =
  | { stringValue: string }
  | { longValue: number }
  | { doubleValue: number }
  | { booleanValue: boolean };

function scalarField(raw: string, kind: ScalarKind, options: ResultOptions): Scalar | { blobValue: string } {
  switch (kind) {
    case 'long':
      return options.longAsString ? { stringValue: raw } : { longValue: Number(raw) };
    case 'double':
      return { doubleValue: Number(raw) };
    case 'bool':
      return { booleanValue: raw === 't' };
    case 'blob':
      // bytea_output is forced to hex for every session.
      return { blobValue: Buffer.from(raw.slice(2), 'hex').toString('base64') };
    case 'timestamptz':
      return { stringValue: utcTimestamp(raw) };
    case 'numeric':
      if (!options.decimalAsNumber) return { stringValue: raw };
      return /^-?\d+$/.test(raw) ? { longValue: Number(raw) } : { doubleValue: Number(raw) };
    case 'string':
      return { stringValue: raw };
  }
}

type PgArrayItem = string | null | PgArrayItem[];

/** Parses PostgreSQL's array output (`{1,2}`, `{{"a b",NULL}}`, `[0:1]={x,y}`). Throws on anything else. */
export function parsePgArray(text: string): PgArrayItem[] {
  let i = text.startsWith('[') ? text.indexOf('=') + 1 : 0;
  const fail = (): never => {
    throw new Error(`not an array literal: ${text}`);
  };
  const skipSpaces = () => {
    while (text[i] === ' ') i++;
  };
  const parseLevel = (): PgArrayItem[] => {
    if (text[i] !== '{') fail();
    i++;
    const items: PgArrayItem[] = [];
    skipSpaces();
    if (text[i] === '}') {
      i++;
      return items;
    }
    for (;;) {
      skipSpaces();
      const ch = text[i];
      if (ch === '{') items.push(parseLevel());
      else if (ch === '"') {
        let value = '';
        for (i++; i < text.length && text[i] !== '"'; i++) {
          if (text[i] === '\\') i++;
          value += text[i] ?? '';
        }
        if (text[i] !== '"') fail();
        i++;
        items.push(value);
      } else {
        let value = '';
        while (i < text.length && text[i] !== ',' && text[i] !== '}') {
          if (text[i] === '\\') i++;
          value += text[i] ?? '';
          i++;
        }
        value = value.trim();
        items.push(value.toUpperCase() === 'NULL' ? null : value);
      }
      skipSpaces();
      if (text[i] === ',') i++;
      else if (text[i] === '}') {
        i++;
        return items;
      } else fail();
    }
  };
  const items = parseLevel();
  if (i !== text.length) fail();
  return items;
}

function arrayValue(items: PgArrayItem[], kind: ScalarKind, options: ResultOptions): ArrayValue {
  if (items.some(Array.isArray)) {
    return {
      arrayValues: items.map((item) => arrayValue(Array.isArray(item) ? item : [item], kind, options)),
    };
  }
  const scalars = items.map((item) => (typeof item === 'string' ? scalarField(item, kind, options) : null));
  const pick = <T>(read: (field: JsonObject) => T | undefined): (T | null)[] =>
    scalars.map((field) => (field === null ? null : (read(field) ?? null)));
  // The element type decides the list even when the array is empty, as with the real API ('{}' → stringValues: []).
  if (kind === 'long' && !options.longAsString) {
    return { longValues: pick((f) => (typeof f.longValue === 'number' ? f.longValue : undefined)) };
  }
  if (kind === 'double' || (kind === 'numeric' && options.decimalAsNumber)) {
    return {
      doubleValues: pick((f) => {
        const n = f.doubleValue ?? f.longValue;
        return typeof n === 'number' ? n : undefined;
      }),
    };
  }
  if (kind === 'bool') {
    return { booleanValues: pick((f) => (typeof f.booleanValue === 'boolean' ? f.booleanValue : undefined)) };
  }
  return {
    stringValues: items.map((item) => {
      if (item === null || Array.isArray(item)) return null;
      if (kind === 'timestamptz') return utcTimestamp(item);
      return item;
    }),
  };
}

function toField(raw: unknown, column: ColumnKind, options: ResultOptions): Field {
  if (raw === null || raw === undefined) return { isNull: true };
  const text = typeof raw === 'string' ? raw : String(raw);
  if (column.array) {
    try {
      return { arrayValue: arrayValue(parsePgArray(text), column.kind, options) };
    } catch {
      return { stringValue: text }; // an array type with an unusual output format (int2vector, box[])
    }
  }
  return scalarField(text, column.kind, options);
}

/** formatRecordsAs JSON: the same values as plain JSON (blobs stay base64, json columns stay strings). */
function fieldToJson(field: Field): unknown {
  if ('isNull' in field) return null;
  if ('stringValue' in field) return field.stringValue;
  if ('longValue' in field) return field.longValue;
  if ('doubleValue' in field) return field.doubleValue;
  if ('booleanValue' in field) return field.booleanValue;
  if ('blobValue' in field) return field.blobValue;
  return arrayToJson(field.arrayValue);
}

function arrayToJson(value: ArrayValue): unknown[] {
  if ('arrayValues' in value) return value.arrayValues.map(arrayToJson);
  if ('stringValues' in value) return value.stringValues;
  if ('longValues' in value) return value.longValues;
  if ('doubleValues' in value) return value.doubleValues;
  return value.booleanValues;
}

/** JSON has no NaN or infinities; AWS JSON protocols send them as strings, which the SDK turns back into numbers. */
function stringifyResponse(body: unknown): string {
  return JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Column metadata (shaped like JDBC's ResultSetMetaData, which the Data API's columnMetadata mirrors)

const JDBC_TYPES: Record<string, number> = {
  bool: -7, // BIT, as PgJDBC reports booleans
  bit: -7,
  int2: 5,
  int4: 4,
  int8: -5,
  oid: -5,
  float4: 7,
  float8: 8,
  money: 8,
  numeric: 2,
  char: 1,
  bpchar: 1,
  varchar: 12,
  text: 12,
  name: 12,
  bytea: -2,
  date: 91,
  time: 92,
  timetz: 92,
  timestamp: 93,
  timestamptz: 93,
  xml: 2009,
};
const JDBC_ARRAY = 2003;
const JDBC_OTHER = 1111;

interface AttributeInfo {
  relname: string;
  notNull: boolean;
  autoIncrement: boolean;
}

async function loadAttributes(client: PoolClient, fields: FieldDef[]): Promise<Map<string, AttributeInfo>> {
  const attributes = new Map<string, AttributeInfo>();
  const columns = fields.filter((f) => f.tableID && f.columnID > 0);
  if (columns.length === 0) return attributes;
  // Every value arrives as text (RAW_TEXT_TYPES): booleans as 't'/'f'.
  const result = await client.query<{
    relid: string;
    attnum: string;
    relname: string;
    attnotnull: string;
    autoinc: string;
  }>(
    `select a.attrelid as relid, a.attnum, c.relname, a.attnotnull,
            (a.attidentity <> '' or coalesce(pg_get_expr(d.adbin, d.adrelid) like 'nextval(%', false)) as autoinc
       from unnest($1::oid[], $2::int2[]) as k(relid, attnum)
       join pg_attribute a on a.attrelid = k.relid and a.attnum = k.attnum
       join pg_class c on c.oid = a.attrelid
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum`,
    [columns.map((f) => f.tableID), columns.map((f) => f.columnID)],
  );
  for (const row of result.rows) {
    attributes.set(`${row.relid}:${row.attnum}`, {
      relname: row.relname,
      notNull: row.attnotnull === 't',
      autoIncrement: row.autoinc === 't',
    });
  }
  return attributes;
}

function precisionAndScale(typeName: string, typmod: number): [number, number] {
  switch (typeName) {
    case 'int2':
      return [5, 0];
    case 'int4':
      return [10, 0];
    case 'int8':
    case 'oid':
      return [19, 0];
    case 'float4':
      return [8, 8];
    case 'float8':
      return [17, 17];
    case 'bool':
      return [1, 0];
    case 'numeric':
      return typmod > 0 ? [((typmod - 4) >> 16) & 0xffff, (typmod - 4) & 0xffff] : [0, 0];
    case 'varchar':
    case 'bpchar':
      return typmod > 0 ? [typmod - 4, 0] : [2147483647, 0];
    case 'date':
      return [13, 0];
    case 'time':
      return [15, 6];
    case 'timestamp':
      return [29, 6];
    case 'timestamptz':
      return [35, 6];
    default:
      return [2147483647, 0];
  }
}

const SIGNED = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'money']);
const CASE_INSENSITIVE = new Set([
  ...SIGNED,
  'oid',
  'bool',
  'bit',
  'date',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'interval',
]);
const SERIAL_NAMES: Record<string, string> = { int2: 'smallserial', int4: 'serial', int8: 'bigserial' };

function columnMetadata(
  field: FieldDef,
  catalog: TypeCatalog,
  attributes: Map<string, AttributeInfo>,
): ColumnMetadata {
  const info = catalog.info(field.dataTypeID);
  const attribute = attributes.get(`${field.tableID}:${field.columnID}`);
  const baseName = info?.name ?? 'unknown';
  const isArray = info?.category === 'A';
  const elementName = isArray ? (catalog.info(info?.elem ?? 0)?.name ?? '') : '';
  const [precision, scale] = precisionAndScale(baseName, field.dataTypeModifier);
  const autoIncrement = attribute?.autoIncrement ?? false;
  return {
    name: field.name,
    label: field.name,
    type: isArray ? JDBC_ARRAY : (JDBC_TYPES[baseName] ?? JDBC_OTHER),
    // PgJDBC reports serial columns as serial/bigserial.
    typeName: (autoIncrement ? SERIAL_NAMES[baseName] : undefined) ?? baseName,
    schemaName: '',
    tableName: attribute?.relname ?? '',
    isAutoIncrement: autoIncrement,
    isSigned: SIGNED.has(baseName),
    isCurrency: baseName === 'money',
    isCaseSensitive: !CASE_INSENSITIVE.has(baseName),
    // ResultSetMetaData: 0 columnNoNulls, 1 columnNullable (also for expressions).
    nullable: attribute?.notNull ? 0 : 1,
    precision,
    scale,
    arrayBaseColumnType: isArray ? (JDBC_TYPES[elementName] ?? JDBC_OTHER) : 0,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Statement execution

interface ExecuteOptions {
  includeResultMetadata: boolean;
  formatRecordsAsJson: boolean;
  result: ResultOptions;
}

interface StatementResult {
  fields: FieldDef[];
  rows: unknown[][];
  rowCount: number;
  returnsRows: boolean;
}

const dataTypeOf = (field: FieldDef) => field.dataTypeID;

function isPgError(err: unknown): err is pg.DatabaseError {
  return err instanceof pg.DatabaseError;
}

/**
 * The message the Data API gives for a PostgreSQL error: PgJDBC's rendering (severity, message, hint, position),
 * without the DETAIL line (it would carry row values), followed by the SQLSTATE.
 */
export function formatPgError(err: pg.DatabaseError): string {
  let message = `${err.severity ?? 'ERROR'}: ${err.message}`;
  if (err.hint) message += `\n  Hint: ${err.hint}`;
  if (err.position) message += `\n  Position: ${err.position}`;
  return `${message}; SQLState: ${err.code ?? 'XX000'}`;
}

async function runStatement(client: PoolClient, text: string, values: unknown[]): Promise<StatementResult> {
  // The extended protocol, even without parameters: PostgreSQL then refuses several statements in one call
  // ("cannot insert multiple commands into a prepared statement"), as the Data API refuses them.
  const config = { text, values, rowMode: 'array' as const, queryMode: 'extended' };
  const result = await client.query<unknown[]>(config);
  const fields = result.fields ?? [];
  return {
    fields,
    rows: result.rows,
    rowCount: result.rowCount ?? 0,
    // A SELECT with no columns still returns rows; anything with a row description does.
    returnsRows: fields.length > 0 || result.command === 'SELECT',
  };
}

/**
 * BatchExecute's generatedFields: with RETURNING, the first returned row. That is how the Serverless v2 generation
 * is described (Serverless v1 left it empty on PostgreSQL); without RETURNING it is empty.
 */
async function generatedFields(
  client: PoolClient,
  catalog: TypeCatalog,
  result: StatementResult,
): Promise<Field[]> {
  const row = result.returnsRows ? result.rows[0] : undefined;
  if (!row) return [];
  await catalog.load(client, result.fields.map(dataTypeOf));
  const plain = { decimalAsNumber: false, longAsString: false };
  return result.fields.map((f, i) => toField(row[i], catalog.columnKind(f.dataTypeID), plain));
}

async function executeResponse(
  client: PoolClient,
  catalog: TypeCatalog,
  result: StatementResult,
  options: ExecuteOptions,
): Promise<JsonObject> {
  if (!result.returnsRows) {
    // DML and DDL: generatedFields is always empty on PostgreSQL (use RETURNING).
    return { numberOfRecordsUpdated: result.rowCount, generatedFields: [] };
  }
  await catalog.load(client, result.fields.map(dataTypeOf));
  const kinds = result.fields.map((f) => catalog.columnKind(f.dataTypeID));
  const records = result.rows.map((row) =>
    kinds.map((kind, index) => toField(row[index], kind, options.result)),
  );
  // A statement that returns rows reports no update count, even INSERT ... RETURNING (JDBC semantics).
  const response: JsonObject = { numberOfRecordsUpdated: 0 };
  if (options.includeResultMetadata) {
    const attributes = await loadAttributes(client, result.fields);
    response.columnMetadata = result.fields.map((f) => columnMetadata(f, catalog, attributes));
  }
  if (options.formatRecordsAsJson) {
    const labels = result.fields.map((f) => f.name);
    const objects = records.map((fields) =>
      Object.fromEntries(fields.map((field, index) => [labels[index] ?? String(index), fieldToJson(field)])),
    );
    response.formattedRecords = stringifyResponse(objects);
  } else {
    response.records = records;
  }
  return response;
}

// ---------------------------------------------------------------------------------------------------------------
// Transactions

interface OpenTransaction {
  id: string;
  client: PoolClient;
  /** A call is running on it: the Data API refuses a second one instead of queueing it. */
  busy: boolean;
  idleTimer: NodeJS.Timeout | undefined;
}

// Real transaction ids are 184 characters of base64.
const newTransactionId = () => randomBytes(138).toString('base64');

// ---------------------------------------------------------------------------------------------------------------
// The server

export async function startDataApiServer(options: DataApiServerOptions): Promise<DataApiServer> {
  const statementErrorName = options.statementErrorName ?? 'DatabaseErrorException';
  const databaseName = decodeURIComponent(new URL(options.connectionString).pathname.slice(1)) || 'postgres';
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    types: RAW_TEXT_TYPES,
    // Data API sessions run in UTC; the rest keeps the text output this endpoint parses stable.
    options: '-c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres -c bytea_output=hex',
    application_name: 'data-api-test-server',
    max: 20,
    connectionTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  });
  // A connection that dies (database dropped WITH (FORCE), server restart) must not crash the test process: the pool
  // listens on idle connections, `connect` below on checked-out ones, and remembers them so they are not reused.
  pool.on('error', () => {});
  const listening = new WeakSet<PoolClient>();
  const failedConnections = new WeakSet<PoolClient>();
  const catalog = new TypeCatalog();
  const transactions = new Map<string, OpenTransaction>();
  const calls: Record<string, number> = {};
  let resumingFailures = options.resumingFailures ?? 0;
  let throttlingFailures = 0;
  const resourceArn = 'arn:aws:rds:us-east-1:123456789012:cluster:data-api-test-server';
  const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:data-api-test-server-AbCdEf';

  // The database cannot be reached, or dropped the connection (down, restarting, database dropped): reported as
  // DatabaseUnavailableException ("The writer instance in the DB cluster isn't available"), a 504 server fault the
  // SDK retries. Which error the real service gives in each such case is not documented; this one is the closest.
  const unavailable = (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    return new DataApiError('DatabaseUnavailableException', 504, `Database connection failed: ${message}`);
  };

  const statementError = (err: unknown): DataApiError => {
    if (err instanceof DataApiError) return err;
    if (!isPgError(err) || !err.code || err.severity === 'FATAL' || err.severity === 'PANIC')
      return unavailable(err);
    const message = formatPgError(err);
    // Several statements in one call: refused by the Data API itself, not reported as a database error.
    if (err.code === '42601' && /multiple commands/.test(err.message)) return badRequest(message);
    return new DataApiError(statementErrorName, 400, message);
  };

  /** statementError, remembering a connection that failed (its `error` event may come after the query's rejection). */
  const connectionAware = (client: PoolClient, err: unknown): DataApiError => {
    const mapped = statementError(err);
    if (mapped.name === 'DatabaseUnavailableException') failedConnections.add(client);
    return mapped;
  };

  const connect = async (): Promise<PoolClient> => {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw unavailable(err);
    }
    if (!listening.has(client)) {
      listening.add(client);
      client.on('error', () => failedConnections.add(client));
    }
    return client;
  };

  const release = (client: PoolClient, destroy = false) => {
    client.release(destroy || failedConnections.has(client));
  };

  const finishTransaction = (tx: OpenTransaction, destroy: boolean) => {
    clearTimeout(tx.idleTimer);
    transactions.delete(tx.id);
    release(tx.client, destroy);
  };

  const touch = (tx: OpenTransaction) => {
    clearTimeout(tx.idleTimer);
    tx.idleTimer = setTimeout(() => {
      if (tx.busy) return touch(tx);
      transactions.delete(tx.id);
      tx.client.query('ROLLBACK').then(
        () => release(tx.client),
        () => release(tx.client, true),
      );
    }, TRANSACTION_IDLE_TIMEOUT_MS);
    tx.idleTimer.unref();
  };

  /** Claims a transaction for one call; refuses unknown ids and concurrent calls as the Data API does. */
  const claim = (id: string): OpenTransaction => {
    const tx = transactions.get(id);
    if (!tx) throw badRequest(`Transaction ${id} is not found`);
    if (tx.busy)
      throw new DataApiError('DatabaseErrorException', 400, 'Transaction is still running a query');
    tx.busy = true;
    touch(tx);
    return tx;
  };

  const releaseClaim = (tx: OpenTransaction) => {
    tx.busy = false;
    if (transactions.has(tx.id)) touch(tx);
  };

  /** Runs `work` on the transaction's connection, or on a pooled connection in autocommit mode. */
  const withConnection = async <T>(
    transactionId: string | undefined,
    work: (client: PoolClient) => Promise<T>,
  ): Promise<T> => {
    if (transactionId !== undefined) {
      const tx = claim(transactionId);
      try {
        return await work(tx.client);
      } catch (err) {
        const mapped = connectionAware(tx.client, err);
        // A transaction whose connection died is lost: later calls find no such transaction.
        if (failedConnections.has(tx.client)) finishTransaction(tx, true);
        throw mapped;
      } finally {
        releaseClaim(tx);
      }
    }
    const client = await connect();
    try {
      return await work(client);
    } catch (err) {
      throw connectionAware(client, err);
    } finally {
      // Each call is its own transaction: a BEGIN sent outside BeginTransaction must not leak to the next call.
      if (!failedConnections.has(client) && client.getTransactionStatus() !== 'I') {
        await client.query('ROLLBACK').catch(() => failedConnections.add(client));
      }
      release(client);
    }
  };

  const parseResultOptions = (body: JsonObject): ExecuteOptions => {
    const resultSetOptions = isRecord(body.resultSetOptions) ? body.resultSetOptions : {};
    const format = optionalString(body, 'formatRecordsAs');
    if (format !== undefined && format !== 'NONE' && format !== 'JSON') {
      throw badRequest(`Invalid formatRecordsAs: ${format}`);
    }
    return {
      includeResultMetadata: body.includeResultMetadata === true,
      formatRecordsAsJson: format === 'JSON',
      result: {
        decimalAsNumber: resultSetOptions.decimalReturnType === 'DOUBLE_OR_LONG',
        longAsString: resultSetOptions.longReturnType === 'STRING',
      },
    };
  };

  const requireTarget = (body: JsonObject) => {
    requiredString(body, 'resourceArn');
    requiredString(body, 'secretArn');
  };

  const handlers: Record<string, (body: JsonObject) => Promise<JsonObject>> = {
    async Execute(body) {
      requireTarget(body);
      const sql = requiredString(body, 'sql');
      const executeOptions = parseResultOptions(body);
      const { text, values } = bindNamedParameters(sql, parseParameters(body.parameters));
      return withConnection(optionalString(body, 'transactionId'), async (client) => {
        const result = await runStatement(client, text, values);
        return executeResponse(client, catalog, result, executeOptions);
      });
    },

    async BatchExecute(body) {
      requireTarget(body);
      const sql = requiredString(body, 'sql');
      const sets = body.parameterSets ?? [];
      if (!Array.isArray(sets)) throw badRequest('parameterSets must be a list');
      // The statement runs once per parameter set; with no sets it does not run at all.
      if (sets.length === 0) return { updateResults: [] };
      const bound = sets.map((set: unknown) => bindNamedParameters(sql, parseParameters(set)));
      const transactionId = optionalString(body, 'transactionId');
      return withConnection(transactionId, async (client) => {
        // Outside a transaction the batch is still atomic (one implicit transaction, like a JDBC batch).
        if (transactionId === undefined) await client.query('BEGIN');
        const updateResults: JsonObject[] = [];
        for (const { text, values } of bound) {
          const result = await runStatement(client, text, values);
          updateResults.push({ generatedFields: await generatedFields(client, catalog, result) });
        }
        if (transactionId === undefined) await client.query('COMMIT');
        return { updateResults };
      });
    },

    async BeginTransaction(body) {
      requireTarget(body);
      const client = await connect();
      try {
        await client.query('BEGIN');
      } catch (err) {
        release(client, true);
        throw statementError(err);
      }
      const tx: OpenTransaction = { id: newTransactionId(), client, busy: false, idleTimer: undefined };
      transactions.set(tx.id, tx);
      touch(tx);
      return { transactionId: tx.id };
    },

    async CommitTransaction(body) {
      requireTarget(body);
      const tx = claim(requiredString(body, 'transactionId'));
      try {
        if (tx.client.getTransactionStatus() === 'E') {
          // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK and no error. Reporting success would
          // hide lost writes, so this endpoint refuses, as PgJDBC does for such a silent rollback. What the Data API
          // itself answers here is not documented.
          await tx.client.query('ROLLBACK');
          throw new DataApiError(
            statementErrorName,
            400,
            'ERROR: The database returned ROLLBACK, so the transaction cannot be committed: a statement in it failed; SQLState: 25P02',
          );
        }
        await tx.client.query('COMMIT');
        return { transactionStatus: 'Transaction Committed' };
      } catch (err) {
        throw connectionAware(tx.client, err);
      } finally {
        tx.busy = false;
        finishTransaction(tx, false);
      }
    },

    async RollbackTransaction(body) {
      requireTarget(body);
      const tx = claim(requiredString(body, 'transactionId'));
      try {
        await tx.client.query('ROLLBACK');
        return { transactionStatus: 'Rollback Complete' };
      } catch (err) {
        throw connectionAware(tx.client, err);
      } finally {
        tx.busy = false;
        finishTransaction(tx, false);
      }
    },
  };

  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-amzn-requestid': randomUUID(),
      ...headers,
    });
    res.end(body);
  };

  const sendError = (res: ServerResponse, err: DataApiError) => {
    send(res, err.status, JSON.stringify({ message: err.message }), {
      'x-amzn-errortype': `${err.name}${ERROR_TYPE_SUFFIX}`,
    });
  };

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const operation = new URL(req.url ?? '/', 'http://localhost').pathname.slice(1);
    const handler = handlers[operation];
    if (req.method !== 'POST' || !OPERATIONS.has(operation) || !handler) {
      return sendError(
        res,
        new DataApiError('UnknownOperationException', 404, `Unknown operation ${operation}`),
      );
    }
    calls[operation] = (calls[operation] ?? 0) + 1;
    const raw = await readBody(req);
    if (resumingFailures > 0) {
      resumingFailures--;
      return sendError(
        res,
        new DataApiError(
          'DatabaseResumingException',
          400,
          'The Aurora DB instance data-api-test-server-instance-1 is resuming after being auto-paused. ' +
            'Please wait a few seconds and try again.',
        ),
      );
    }
    if (throttlingFailures > 0) {
      throttlingFailures--;
      return sendError(res, new DataApiError('ThrottlingException', 400, 'Rate exceeded'));
    }
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      return sendError(
        res,
        new DataApiError('SerializationException', 400, 'Request body is not valid JSON'),
      );
    }
    if (!isRecord(body)) return sendError(res, badRequest('Request body must be a JSON object'));
    try {
      const response = stringifyResponse(await handler(body));
      if (Buffer.byteLength(response) > MAX_RESPONSE_BYTES) {
        return sendError(res, badRequest('Database returned more than the allowed response size limit'));
      }
      send(res, 200, response);
    } catch (err) {
      sendError(res, statementError(err));
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) sendError(res, new DataApiError('InternalServerErrorException', 500, message));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    resetCalls() {
      for (const key of Object.keys(calls)) delete calls[key];
    },
    failNextWithResuming(n: number) {
      resumingFailures = n;
    },
    failNextWithThrottling(n: number) {
      throttlingFailures = n;
    },
    secretArn,
    resourceArn,
    database: databaseName,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // The SDK keeps connections alive; without this, close() would wait for them to time out.
      server.closeAllConnections();
      for (const tx of [...transactions.values()]) {
        await tx.client.query('ROLLBACK').catch(() => {});
        finishTransaction(tx, true);
      }
      await closed;
      await pool.end();
    },
  };
}
