// The WHERE conditions of the admin observability reads: the event filters as conditions on observability_events `e`
// (eventConditions) or, for the filters on columns named alike, on rollup rows (dimConditions); which filters a query
// uses (usedFilters) decides whether a read can stay on the rollups (observability-summary.ts).
import { type SQL, sql } from 'drizzle-orm';
import { uuidParam } from '../core/db/sql-values.ts';
import { likePattern } from './cursor.ts';
import type { Grain } from './rollups/rollups.ts';
import type { EventFilters } from './schemas.ts';

/** Conditions joined with AND (none: TRUE). */
export const and = (parts: SQL[]): SQL => (parts.length ? sql.join(parts, sql` AND `) : sql`TRUE`);

/** The session detail's list keys, written as JSON keys of the document the statement builds. */
type SessionListKey = 'agent_types' | 'actors' | 'models';

/**
 * Every word lit() may write into a statement: the grains, the rollup kinds and the session detail's list keys.
 * A closed table, so that no caller can pass text through it into SQL.
 */
const SQL_WORDS = [
  'minute',
  'hour',
  '6h',
  'day',
  'week',
  'call',
  'tool',
  'actor',
  'agent_types',
  'actors',
  'models',
  'agent_types_total',
  'actors_total',
  'models_total',
] as const satisfies readonly (
  | Grain
  | 'call'
  | 'tool'
  | 'actor'
  | SessionListKey
  | `${SessionListKey}_total`
)[];
export type SqlWord = (typeof SQL_WORDS)[number];
const WORDS: ReadonlySet<string> = new Set(SQL_WORDS);

/** A word of SQL_WORDS as an SQL literal (literals, not parameters, let the planner match partial indexes). */
export function lit(value: SqlWord): SQL {
  // The type admits the table only; the check keeps a cast or a value from outside TypeScript out too.
  if (!WORDS.has(value)) throw new TypeError(`not a known SQL word: ${JSON.stringify(value)}`);
  return sql.raw(`'${value}'`);
}

/** Conditions on columns named alike in observability_events and observability_rollups. */
const DIMS = {
  agent_type: 'agent_type',
  mcp: 'mcp_name',
  tool: 'tool',
  event_type: 'event_type',
  result: 'result',
  deny_code: 'deny_code',
  rule: 'rule_applied',
  model: 'model',
  actor: 'actor_email',
  group: 'group_name',
} as const;
export type DimKey = keyof typeof DIMS;
export const CALL_KEYS: readonly DimKey[] = [
  'agent_type',
  'mcp',
  'tool',
  'event_type',
  'result',
  'deny_code',
  'rule',
  'model',
];
export const SERIES_KEYS: readonly DimKey[] = ['event_type', 'result'];
export const ACTOR_ROW_KEYS: readonly DimKey[] = ['actor', 'group'];
const ALL_FILTERS = [...Object.keys(DIMS), 'device_id', 'serial', 'session_id', 'skill', 'q'] as const;

export function dimConditions(f: EventFilters, keys: readonly DimKey[], alias = ''): SQL[] {
  const out: SQL[] = [];
  for (const key of keys) {
    const value = f[key];
    if (value !== undefined) out.push(sql`${sql.raw(`${alias}${DIMS[key]}`)} = ${value}`);
  }
  return out;
}

/** WHERE conditions of the event filters on observability_events `e` (time range excluded). */
export function eventConditions(f: EventFilters): SQL[] {
  const out = dimConditions(f, Object.keys(DIMS) as DimKey[], 'e.');
  if (f.device_id) out.push(sql`e.device_id = ${uuidParam(f.device_id)}`);
  if (f.serial) {
    // Through the device ids (the device index) rather than the unindexed serial column; the serial an event
    // carries is the one its device had, so the second condition only confirms it.
    out.push(sql`e.device_id IN (SELECT d.id FROM devices d WHERE d.serial_number = ${f.serial})`);
    out.push(sql`e.serial_number = ${f.serial}`);
  }
  if (f.session_id) out.push(sql`e.session_id = ${f.session_id}`);
  if (f.skill) out.push(sql`e.skills @> jsonb_build_array(${f.skill}::text)`);
  if (f.q) {
    const p = likePattern(f.q);
    // The first condition is implied by the second; stated, it lets the planner walk the text index.
    out.push(sql`(e.deny_reason IS NOT NULL OR e.error_message IS NOT NULL)`);
    out.push(sql`(e.deny_reason ILIKE ${p} OR e.error_message ILIKE ${p})`);
  }
  return out;
}

export const usedFilters = (f: EventFilters): string[] =>
  ALL_FILTERS.filter((k) => (f as Record<string, unknown>)[k] !== undefined);
