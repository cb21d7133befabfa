// Size bounds of the admin observability responses. The RDS Data API answers at most 1 MiB per call and 64 KB per
// row (docs/pitfalls.md); API Gateway and Lambda allow more, so the Data API sets the bounds. Every list is bounded in
// rows (limit) and in bytes: a page holds `limit` items or fewer when they would pass its byte budget, and its
// next_cursor continues after the last item returned. Long free text is shortened in list views (the detail
// endpoint returns it whole). Each JSON document is read in chunks of at most 64 KB (one row each).
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';

/** Byte budget of the items of one page (events, sessions, devices, agents, MCPs, changes). */
export const PAGE_BYTES = 512 * 1024;
/** Byte budget of one bounded side list (top N lists of the summary, filter values, device detail lists). */
export const LIST_BYTES = 32 * 1024;
/** Characters of deny_reason / error_message in list views, and of a skill name; skills listed in list views. */
export const TEXT_PREVIEW_CHARS = 200;
export const SKILL_PREVIEW_CHARS = 100;
export const SKILLS_PREVIEW = 10;

// A chunk is at most 60,003 bytes (60,000 and the rest of a character cut there): under the Data API's 64 KB per row.
const CHUNK_BYTES = 60_000;

/**
 * Where chunk `j` (an SQL expression) starts in the document's UTF-8 bytes `d.b`: j * CHUNK_BYTES, moved past the
 * continuation bytes (10xxxxxx, at most 3) of a character cut there, so that every chunk is whole characters.
 */
const chunkStart = (j: string): string => {
  const at = `${j} * ${CHUNK_BYTES}`;
  const continues = (k: number) =>
    `(${at} + ${k} < octet_length(d.b) AND get_byte(d.b, ${at} + ${k}) & 192 = 128)`;
  return `(${at} + CASE WHEN ${continues(0)} THEN CASE WHEN ${continues(1)} THEN CASE WHEN ${continues(2)} THEN 3
    ELSE 2 END ELSE 1 END ELSE 0 END)`;
};

/**
 * Runs `query` (one row, one json column `j`) and returns the parsed document, read in chunks of at most 64 KB so that
 * no result row passes the Data API's row limit. null when there is no row or `j` is NULL.
 *
 * The chunks are cut from the document's UTF-8 bytes, at character boundaries. Cut from the text, they would cost
 * more as documents grow: substr() of UTF-8 text counts the characters before its start, so n chunks read the
 * document n/2 times.
 */
export async function queryDoc<T>(db: Db, query: SQL): Promise<T> {
  const rows = await queryRows(
    db,
    // MATERIALIZED: the document is computed once (a subquery would be inlined into every use of d.b).
    sql`WITH d AS MATERIALIZED (SELECT convert_to((q.j)::text, 'UTF8') AS b FROM (${query}) AS q)
      SELECT convert_from(substr(d.b, ${sql.raw(chunkStart('i'))} + 1,
          ${sql.raw(chunkStart('(i + 1)'))} - ${sql.raw(chunkStart('i'))}), 'UTF8') AS c
      FROM d, generate_series(0, greatest(0, (octet_length(d.b) - 1) / ${sql.raw(String(CHUNK_BYTES))})) AS i
      ORDER BY i`,
    { c: col.nullable(col.text) },
  );
  if (rows.length === 0 || rows[0]?.c === null || rows[0]?.c === undefined) return null as T;
  return JSON.parse(rows.map((r) => r.c ?? '').join('')) as T;
}

/**
 * A JSON object {items, available} from `rows` (columns `o` json and `rn`, the 1-based position): `items` are the
 * `o` in order, cut after the last one that keeps the running size within `budget` bytes (the first is always kept);
 * `available` counts the rows offered. items.length < available means the byte budget cut the list.
 */
export function boundedArray(rows: SQL, budget: number): SQL {
  return sql`(SELECT json_build_object('items', coalesce(json_agg(b.o ORDER BY b.rn) FILTER (WHERE b.keep), '[]'::json),
      'available', count(*)::int)
    FROM (SELECT r.o, r.rn, r.rn = 1 OR sum(octet_length(r.o::text)) OVER (ORDER BY r.rn) <= ${sql.raw(String(budget))}
        AS keep FROM (${rows}) AS r) AS b)`;
}

export interface Bounded<T> {
  items: T[];
  available: number;
}

/**
 * A keyset page from a bounded array of limit + 1 rows: the items to return and whether more follow (a row beyond
 * the limit, or rows the byte budget cut).
 */
export function pageOf<T>(rows: Bounded<T> | null, limit: number): { items: T[]; more: boolean } {
  const got = rows?.items ?? [];
  const items = got.slice(0, limit);
  return { items, more: (rows?.available ?? 0) > items.length };
}
