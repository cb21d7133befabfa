// Opaque keyset cursors of the admin observability lists: base64url of JSON {k: list, v: position, f: filter hash,
// c: HMAC}. The position is the sort key of the last row returned plus its unique id, so a page never depends on an
// offset and a deleted row does not break the walk. `c` is an HMAC-SHA256 of the rest under a key derived from the
// deployment's auth.jwt_secret, so a client cannot make up a position; every function of one deployment shares it.
// A cursor that does not decode, whose HMAC is wrong (tampered, or from another deployment), or that was issued for
// another list or other filters is 400 validation_failed naming `cursor`.
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../core/config/schema.ts';
import { invalidField } from '../core/errors.ts';

const digest = (text: string, n: number) => createHash('sha256').update(text).digest('base64url').slice(0, n);

// Without a secret (auth.provider = "idp" and no CLI sign-in, which only a local setup runs), the key is this
// process's own: its cursors are valid as long as it runs.
const PROCESS_KEY = randomBytes(32);
const keys = new Map<string, Buffer>();

/** The cursors' HMAC key of a deployment, derived (HKDF-SHA256) from auth.jwt_secret, never the secret itself. */
export function cursorKey(config: Pick<Config, 'auth'>): Buffer {
  const secret = config.auth.jwt_secret;
  if (!secret) return PROCESS_KEY;
  let key = keys.get(secret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, 'acp', 'observability-cursor', 32));
    keys.set(secret, key);
  }
  return key;
}

const mac = (key: Buffer, body: unknown) =>
  createHmac('sha256', key).update(JSON.stringify(body)).digest('base64url').slice(0, 22);

/** A stable hash of the filters a cursor belongs to (the cursor and limit themselves excluded). */
export function filterHash(filters: Record<string, unknown>): string {
  const entries = Object.entries(filters)
    .filter(([k, v]) => k !== 'cursor' && k !== 'limit' && v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return digest(JSON.stringify(entries), 10);
}

export function encodeCursor(
  key: Buffer,
  list: string,
  position: readonly string[],
  filters: string,
): string {
  const body = { k: list, v: position, f: filters };
  return Buffer.from(JSON.stringify({ ...body, c: mac(key, body) }), 'utf8').toString('base64url');
}

const invalid = () =>
  invalidField(
    'query',
    ['cursor'],
    'expected a cursor this list returned for these filters (this one is tampered or stale)',
  );

/** The position of a cursor; `shape` checks each element (regexes of the sort key and the id). */
export function decodeCursor(
  key: Buffer,
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
  const expected = Buffer.from(mac(key, { k: p.k, v, f: p.f }));
  const given = Buffer.from(typeof p.c === 'string' ? p.c : '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
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
