// The lenient side of request validation (docs/api.md, "Requests" and "Pagination"): what a client that follows the
// spec may send without being refused. Every request-body object is built through `nullAsAbsent`, so that a JSON
// null in an optional member means what leaving it out means; the two admin lists whose spec lists no 400
// (GET /v1/admin/requests, GET /v1/admin/audit-logs) build their query parameters from `lenientQuery`.
import * as z from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT } from './common.ts';

/** Objects built by nullAsAbsent (test/unit/core/http/input-rules.test.ts checks that every body object is one). */
const nullTolerant = new WeakSet<z.ZodType>();
export const isNullTolerant = (schema: z.ZodType): boolean => nullTolerant.has(schema);

/**
 * A request-body object in which `null` in an optional member (one that may be left out: `.optional()`,
 * `.default()`) is the member being absent: the member is dropped before validation, so defaults apply, a PATCH
 * leaves the field as it is, and nothing stores a null for it. A null in a required member is still refused (400
 * naming it), and nulls inside free-form values (metadata, a catalog schema, a filter value list) are data, left as
 * they are. `ignore` names members that are accepted and dropped whatever their value (read-only fields a client
 * may send back). The input is never changed: a copy is made when something is dropped.
 */
export function nullAsAbsent<T extends z.ZodObject>(object: T, options: { ignore?: readonly string[] } = {}) {
  const optional = Object.entries(object.shape)
    .filter(([, member]) => (member as z.ZodType)._zod.optin !== undefined)
    .map(([key]) => key);
  const ignore = options.ignore ?? [];
  const schema = z.preprocess((value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const record = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const key of optional) {
      if (record[key] === null) {
        copy ??= { ...record };
        delete copy[key];
      }
    }
    for (const key of ignore) {
      if (key in record) {
        copy ??= { ...record };
        delete copy[key];
      }
    }
    return copy ?? value;
  }, object);
  nullTolerant.add(object);
  return schema;
}

/** Marks a member as read-only in the documents (JSON Schema `readOnly`): sent back, it is ignored. */
export const readOnlyMember = () =>
  z.unknown().optional().meta({
    readOnly: true,
    description: 'Read-only: ignored when sent (the value as read may be sent back)',
  });

/** The text of a query parameter, or undefined when it is absent or empty (`?status=` is no filter). */
const queryText = (value: unknown): string | undefined => {
  const text = Array.isArray(value)
    ? value.join(',')
    : value === undefined || value === null
      ? ''
      : String(value);
  return text.trim() === '' ? undefined : text;
};

/**
 * Query parameters that never refuse a value, for the routes whose spec lists no 400 (docs/api.md, "Pagination"):
 * the response says what was applied (`limit`, `offset`).
 */
export const lenientQuery = {
  /** An integer, capped into [min, max]; absent, empty or not a number is `fallback`. Fractions are truncated. */
  int: (min: number, max: number, fallback: number) =>
    z
      .unknown()
      .optional()
      .transform((value): number => {
        const text = queryText(value);
        const n = text === undefined ? Number.NaN : Number(text);
        return Number.isNaN(n) ? fallback : Math.min(max, Math.max(min, Math.trunc(n)));
      })
      .meta({
        type: 'integer',
        minimum: min,
        maximum: max,
        description: `Default ${fallback}; out of ${min}..${max} is capped, and a value that is not a number is the default`,
      }),
  /**
   * An equality filter on a column that holds one of `values`: absent or empty is no filter, and any other text is
   * compared as it is, so a value outside the list matches nothing (an empty page, total 0).
   */
  filter: <const V extends readonly [string, ...string[]]>(values: V) =>
    z
      .unknown()
      .optional()
      .transform((value): string | undefined => queryText(value))
      .meta({
        type: 'string',
        enum: [...values],
        description: 'A value outside the list matches nothing',
      })
      .optional(),
  /** A free-text equality filter: absent or empty is no filter. */
  text: () =>
    z
      .unknown()
      .optional()
      .transform((value): string | undefined => queryText(value))
      .meta({ type: 'string' })
      .optional(),
  /** One of `values`; absent or anything else is `fallback`. */
  choice: <const V extends readonly [string, ...string[]]>(values: V, fallback: V[number]) =>
    z
      .unknown()
      .optional()
      .transform((value): V[number] => {
        const text = queryText(value);
        return text !== undefined && (values as readonly string[]).includes(text) ? text : fallback;
      })
      .meta({
        type: 'string',
        enum: [...values],
        description: `Default ${fallback}; another value is the default`,
      }),
};

/** limit (1..100, default 20) and offset (0..1,000,000, default 0) of an offset list, capped instead of refused. */
export const cappedPagination = {
  limit: lenientQuery.int(1, MAX_LIMIT, DEFAULT_LIMIT),
  offset: lenientQuery.int(0, 1_000_000, 0),
};

/**
 * The times a request may carry, past their RFC 3339 syntax: a zone offset PostgreSQL reads (at most ±15:59), and a
 * UTC year from 2 to 9998. PostgreSQL reads four-digit years only (0001 to 9999, and year 0000 is none), and the
 * service computes ranges of a few weeks around a time (a default span, whole weekly buckets) that must stay inside
 * them. Outside, each was a 500 from the database (22008, 22009) rather than a 400 naming the field.
 */
export const TIME_BOUNDS: TimeBounds = {
  from: Date.parse('0002-01-01T00:00:00Z'),
  until: Date.parse('9999-01-01T00:00:00Z'),
  says: 'must be between 0002-01-01 and 9998-12-31 (UTC)',
};

/** A range of instants, `from` included and `until` not (epoch milliseconds), and how a refusal says it. */
export interface TimeBounds {
  from: number;
  until: number;
  says: string;
}

/**
 * The times of the audit chain (an audit record's `timestamp`): the years 1970 to 9999, in UTC. Each is stored and
 * hashed as the instant to the millisecond (`toISOString`), and read back as the same text by every driver and by
 * JavaScript's own date parser, which reads the years 0 to 99 as 1900 to 1999 (a record dated 0002-01-01 was read
 * back as 2001-02-01, and the chain no longer verified).
 */
export const AUDIT_TIME_BOUNDS: TimeBounds = {
  from: Date.UTC(1970, 0, 1),
  until: Date.UTC(10_000, 0, 1),
  says: 'must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z (UTC)',
};

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether `YYYY-MM-DD` is a day of the calendar (Date.parse takes 2026-02-30 for March 2; PostgreSQL refuses it). */
function realDay(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/**
 * What is wrong with a time that passed its syntax check, if anything: a day its month does not have, or a time out
 * of `bounds` (TIME_BOUNDS unless said otherwise).
 */
export function timeProblem(text: string, bounds: TimeBounds = TIME_BOUNDS): string | undefined {
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && !realDay(text)) return 'is not a real date';
  const offset = /[+-](\d{2}):\d{2}$/.exec(text);
  if (offset && Number(offset[1]) > 15) return 'has a zone offset past ±15:59';
  if (at < bounds.from || at >= bounds.until) return bounds.says;
  return undefined;
}

/** A time of a request: `schema` (its RFC 3339 syntax), a real day, and `bounds` (TIME_BOUNDS unless said). */
export const boundedTime = <T extends z.ZodType<string>>(schema: T, bounds: TimeBounds = TIME_BOUNDS) =>
  schema.superRefine((value, ctx) => {
    const problem = timeProblem(value, bounds);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** How deep a free-form JSON value may nest, and how many members (object keys and array items) it may hold. */
export const JSON_LIMITS = { depth: 32, members: 10_000 } as const;

/** Depth and member count of a parsed JSON value, stopping as soon as either passes its limit. */
function jsonShape(value: unknown): { depth: number; members: number } {
  let depth = 0;
  let members = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (!v || typeof v !== 'object') continue;
    depth = Math.max(depth, d);
    const children = Array.isArray(v) ? v : Object.values(v);
    members += children.length;
    if (depth > JSON_LIMITS.depth || members > JSON_LIMITS.members) break;
    for (const child of children) stack.push([child, d + 1]);
  }
  return { depth, members };
}

/**
 * A free-form JSON value a client sends (event metadata, a catalog entry's schema and metadata, an audit record's
 * metadata): at most JSON_LIMITS.depth levels deep, JSON_LIMITS.members members and `maxBytes` of JSON text, so that
 * one sender cannot make every later read of it expensive. Refused with 400 naming the field.
 */
export function boundedJson<T extends z.ZodType>(schema: T, maxBytes: number) {
  return schema
    .superRefine((value, ctx) => {
      const { depth, members } = jsonShape(value);
      if (depth > JSON_LIMITS.depth) {
        ctx.addIssue({
          code: 'custom',
          message: `nests more than ${JSON_LIMITS.depth} levels deep (at most ${JSON_LIMITS.depth})`,
        });
      } else if (members > JSON_LIMITS.members) {
        ctx.addIssue({
          code: 'custom',
          message: `holds more than ${JSON_LIMITS.members} members (keys and items)`,
        });
      } else if (value !== undefined && Buffer.byteLength(JSON.stringify(value)) > maxBytes) {
        ctx.addIssue({ code: 'custom', message: `is larger than ${maxBytes} bytes of JSON` });
      }
    })
    .meta({
      description: `Free-form JSON: at most ${JSON_LIMITS.depth} levels deep, ${JSON_LIMITS.members} members and ${maxBytes} bytes`,
    });
}
