// Opaque keyset cursors of the admin observability lists: base64url of JSON {k: list, v: position, f: filter hash,
// c: checksum}. The position is the sort key of the last row returned plus its unique id, so a page never depends on
// an offset and a deleted row does not break the walk. A cursor that does not decode, whose checksum is wrong
// (tampered), or that was issued for another list or other filters is 400 validation_failed naming `cursor`.
import { createHash } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { invalidField } from '../http/validation.ts';

const digest = (text: string, n: number) => createHash('sha256').update(text).digest('base64url').slice(0, n);

/** A stable hash of the filters a cursor belongs to (the cursor and limit themselves excluded). */
export function filterHash(filters: Record<string, unknown>): string {
  const entries = Object.entries(filters)
    .filter(([k, v]) => k !== 'cursor' && k !== 'limit' && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return digest(JSON.stringify(entries), 10);
}

export function encodeCursor(list: string, position: readonly string[], filters: string): string {
  const body = { k: list, v: position, f: filters };
  const c = digest(`acp-cursor:${JSON.stringify(body)}`, 12);
  return Buffer.from(JSON.stringify({ ...body, c }), 'utf8').toString('base64url');
}

const invalid = () =>
  invalidField(
    'query',
    ['cursor'],
    'expected a cursor this list returned for these filters (this one is tampered or stale)',
  );

/** The position of a cursor; `shape` checks each element (regexes of the sort key and the id). */
export function decodeCursor(
  cursor: string,
  list: string,
  filters: string,
  shape: readonly RegExp[],
): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const p = parsed as { k?: unknown; v?: unknown; f?: unknown; c?: unknown };
  if (!p || typeof p !== 'object' || p.k !== list || p.f !== filters || !Array.isArray(p.v)) throw invalid();
  const v = p.v as unknown[];
  if (v.length !== shape.length || !v.every((x, i) => typeof x === 'string' && shape[i]?.test(x)))
    throw invalid();
  const expected = digest(`acp-cursor:${JSON.stringify({ k: p.k, v, f: p.f })}`, 12);
  if (p.c !== expected) throw invalid();
  return v as string[];
}

export const TS_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/;
export const ID_RE = /^(0|[1-9]\d{0,17})$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ANY_RE = /^[\s\S]{0,400}$/;

/** A timestamptz as ISO 8601 UTC with milliseconds (the API's format), the same on every driver. */
export const iso = (expr: SQL): SQL =>
  sql`to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** A timestamptz with microseconds, for cursors (exact keyset positions). */
export const isoUs = (expr: SQL): SQL =>
  sql`to_char((${expr}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Escapes LIKE wildcards so that free text matches literally. */
export const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
