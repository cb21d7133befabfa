// Admin observability: the values each event filter can take in a range, for the dashboard's dropdowns,
// read from the rollups (with the events not folded into them yet) where they hold the values and from a sample of
// the latest events where none does. One statement, which writes nothing.
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { tsParam } from '../../core/db/sql-values.ts';
import { boundedArray, LIST_BYTES, queryDoc } from '../bounds.ts';
import { align, DAY, droppedWithin, rangeOf, retentionNotice } from '../ranges.ts';
import { callCountsSql, readTailOf } from '../rollups/rollups.ts';
import type { FiltersQuery } from '../schemas.ts';

/** Latest events of the range sampled for the session and skill values (no rollup holds them). */
const FILTER_SAMPLE_EVENTS = 5000;

/**
 * The values each filter can take in a range (default the last 7 days), for the dashboard's dropdowns. Each list
 * is {values, total, truncated}, at most `limit` values and LIST_BYTES bytes:
 * - agent_type, mcp, tool, event_type, result, deny_code, rule, model (call rollups), actor, group (actor rollups,
 *   whole UTC days): every value of the range with its calls, most calls first; `total` counts them all.
 * - device and serial: the devices with events in the range, most recently active first (last_event_at; an index
 *   probe per device, no count).
 * - session and skill: the values carried by the range's 5,000 latest events (sessions most recent first, skills
 *   by calls in that sample): there is no rollup of these high-cardinality values. `total` is null.
 */
export async function observabilityFilters(
  db: Db,
  config: Pick<Config, 'events'>,
  query: FiltersQuery,
  now = new Date(),
) {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - 7 * DAY);
  const range = rangeOf(from, to);
  const days = align(from, to, 'day');
  const lim = query.limit;
  const F = tsParam(from);
  const T = tsParam(to);
  const bounded = (rows: string, total: string): SQL =>
    sql`(SELECT json_build_object('values', b->'items', 'available', (b->>'available')::int, 'total', ${sql.raw(total)})
      FROM (SELECT ${boundedArray(sql.raw(rows), LIST_BYTES)} AS b) x)`;
  const counted = (rel: 'f' | 'fa', col: string): SQL =>
    bounded(
      `SELECT json_build_object('value', v, 'calls', n) AS o, row_number() OVER (ORDER BY n DESC, v) AS rn
        FROM (SELECT ${col} AS v, sum(calls)::bigint AS n FROM ${rel} WHERE ${col} <> '' GROUP BY 1
          ORDER BY 2 DESC, 1 LIMIT ${lim}) y`,
      `(SELECT count(DISTINCT ${col})::int FROM ${rel} WHERE ${col} <> '')`,
    );
  const doc = await queryDoc<{
    dropped: boolean;
    lists: Record<string, { values: unknown[]; available: number; total: number | null }>;
  }>(
    db,
    sql`WITH f AS MATERIALIZED (SELECT agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
          calls FROM ${callCountsSql(range.rollupWhere, tsParam(range.from), tsParam(range.to))} c),
      fa AS MATERIALIZED (SELECT actor_email, group_name, calls FROM observability_rollups
          WHERE kind = 'actor' AND grain = 'day' AND bucket >= ${tsParam(days.from)} AND bucket < ${tsParam(days.to)}
        UNION ALL SELECT coalesce(s.actor_email, ''), coalesce(s.group_name, ''), 1
          FROM ${readTailOf(tsParam(days.from), tsParam(days.to))} s),
      dv AS MATERIALIZED (SELECT d.id, d.serial_number, d.last_event_at FROM devices d
        WHERE d.last_event_at >= ${F} AND EXISTS (SELECT 1 FROM observability_events e
          WHERE e.device_id = d.id AND e.event_time >= ${F} AND e.event_time < ${T})
        ORDER BY d.last_event_at DESC, d.id LIMIT ${lim + 1}),
      sample AS MATERIALIZED (SELECT e.session_id, e.skills, e.event_time FROM observability_events e
        WHERE e.event_time >= ${F} AND e.event_time < ${T}
        ORDER BY e.event_time DESC NULLS LAST, e.id DESC NULLS LAST LIMIT ${FILTER_SAMPLE_EVENTS})
    SELECT json_build_object('dropped', ${droppedWithin(F, T)}, 'lists', json_build_object(
      'agent_type', ${counted('f', 'agent_type')}, 'mcp', ${counted('f', 'mcp_name')},
      'tool', ${counted('f', 'tool')}, 'event_type', ${counted('f', 'event_type')},
      'result', ${counted('f', 'result')}, 'deny_code', ${counted('f', 'deny_code')},
      'rule', ${counted('f', 'rule_applied')}, 'model', ${counted('f', 'model')},
      'actor', ${counted('fa', 'actor_email')}, 'group', ${counted('fa', 'group_name')},
      'device', ${bounded(
        `SELECT json_build_object('value', id::text, 'serial_number', serial_number,
            'last_event_at', to_char(last_event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS o,
          row_number() OVER (ORDER BY last_event_at DESC, id) AS rn FROM dv`,
        'NULL::int',
      )},
      'serial', ${bounded(
        `SELECT json_build_object('value', serial_number) AS o, row_number() OVER (ORDER BY serial_number) AS rn
          FROM (SELECT DISTINCT serial_number FROM dv) s`,
        'NULL::int',
      )},
      'session', ${bounded(
        `SELECT json_build_object('value', session_id, 'calls', n, 'last_event_at',
            to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) AS o,
          row_number() OVER (ORDER BY t DESC, session_id) AS rn
          FROM (SELECT session_id, count(*) AS n, max(event_time) AS t FROM sample WHERE session_id IS NOT NULL
            GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT ${lim + 1}) s`,
        'NULL::int',
      )},
      'skill', ${bounded(
        `SELECT json_build_object('value', v, 'calls', n) AS o, row_number() OVER (ORDER BY n DESC, v) AS rn
          FROM (SELECT x.v, count(*) AS n FROM sample, jsonb_array_elements_text(sample.skills) AS x(v)
            GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${lim + 1}) s`,
        'NULL::int',
      )})) AS j`,
  );
  const values = Object.fromEntries(
    Object.entries(doc.lists).map(([name, list]) => [
      name,
      {
        values: list.values.slice(0, lim),
        total: list.total,
        truncated: Math.min(list.values.length, lim) < (list.total ?? list.available),
      },
    ]),
  );
  return {
    range: { from: range.from.toISOString(), to: range.to.toISOString() },
    actor_range: { from: days.from.toISOString(), to: days.to.toISOString() },
    limit: lim,
    sampled_events: FILTER_SAMPLE_EVENTS,
    values,
    // The sampled values (session, skill, device, serial) come from stored events: say where they stop.
    ...retentionNotice(config, doc.dropped === true),
  };
}
