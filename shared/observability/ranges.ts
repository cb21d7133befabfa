// Time ranges of the admin observability reads: a range widened to whole buckets (align), and the rollup rows that
// cover it. A range reads weekly rows for the ISO weeks inside it, daily rows for the other whole days, 6-hourly rows
// for the other whole quarter days, hourly rows for the rest (segments()): 30 days are ~3k rows, 24 hours ~4k
// (25 hourly: 9k).
import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../core/config/schema.ts';
import { tsParam } from '../core/db/sql-values.ts';
import { archiveLocation } from './archive/store.ts';
import { lit } from './conditions.ts';
import { eventRetentionCutoff } from './retention.ts';
import type { Grain } from './rollups/rollups.ts';

const HOUR = 3_600_000;
export const DAY = 86_400_000;
const WEEK = 7 * DAY;
const MONDAY = 4 * DAY; // 1970-01-05, the first Monday after the epoch: ISO weeks start there.
export const STEP: Record<Grain, number> = {
  minute: 60_000,
  hour: HOUR,
  '6h': 6 * HOUR,
  day: DAY,
  week: WEEK,
};
const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;
const floorWeek = (t: number) => Math.floor((t - MONDAY) / WEEK) * WEEK + MONDAY;
const ceilWeek = (t: number) => Math.ceil((t - MONDAY) / WEEK) * WEEK + MONDAY;

interface Segment {
  grain: Grain;
  from: number;
  to: number;
}

type CoverGrain = 'week' | 'day' | '6h' | 'hour';
const FLOOR: Record<CoverGrain, (t: number) => number> = {
  week: floorWeek,
  day: (t) => floorTo(t, DAY),
  '6h': (t) => floorTo(t, STEP['6h']),
  hour: (t) => floorTo(t, HOUR),
};
const CEIL: Record<CoverGrain, (t: number) => number> = {
  week: ceilWeek,
  day: (t) => ceilTo(t, DAY),
  '6h': (t) => ceilTo(t, STEP['6h']),
  hour: (t) => ceilTo(t, HOUR),
};

/** [f, t) as the fewest buckets of `grains` (coarsest first; f and t aligned to the last): the whole coarse buckets
 * inside, then the finer ones around them. */
function cover(f: number, t: number, grains: readonly CoverGrain[]): Segment[] {
  const [grain, ...finer] = grains;
  if (!grain || f >= t) return [];
  if (finer.length === 0) return [{ grain, from: f, to: t }];
  const a = CEIL[grain](f);
  const b = FLOOR[grain](t);
  if (a >= b) return cover(f, t, finer);
  return [...cover(f, a, finer), { grain, from: a, to: b }, ...cover(b, t, finer)];
}

/**
 * The rollup buckets covering [f, t) (both aligned to `finest`): weekly rows for the ISO weeks inside, daily rows for
 * the other whole days, 6-hour rows for the other whole quarter days, hourly rows for the rest. 24 hours: at most
 * 5 + 3 + 5 rows per call key instead of 25.
 */
export function segments(f: number, t: number, finest: 'hour' | 'day'): Segment[] {
  return cover(f, t, finest === 'hour' ? ['week', 'day', '6h', 'hour'] : ['week', 'day']);
}

/**
 * The observability_series_totals buckets covering [f, t) (both aligned to `finest`): daily rows for the whole days,
 * hourly rows for the rest (that table keeps no weekly or 6-hour rows).
 */
export function totalsSegments(f: number, t: number, finest: 'hour' | 'day'): Segment[] {
  return cover(f, t, finest === 'hour' ? ['day', 'hour'] : ['day']);
}

const segmentCondition = (s: Segment): SQL =>
  sql`(grain = ${lit(s.grain)} AND bucket >= ${tsParam(new Date(s.from))} AND bucket < ${tsParam(new Date(s.to))})`;

/** The condition of each segment, for one index range scan each (a union of them, not their OR). */
export const segmentConditions = (segs: Segment[]): SQL[] => segs.map(segmentCondition);

/** Conditions joined by OR (one bitmap scan of the key index for the rows of several segments). */
export const anyOf = (conditions: SQL[]): SQL => sql`(${sql.join(conditions, sql` OR `)})`;

/** The condition selecting the rollup rows of the segments. */
export const segmentsWhere = (segs: Segment[]): SQL => anyOf(segmentConditions(segs));

/** The grains segments() covers a range with, coarsest first, by its finest grain; totalsSegments()'s. */
export const COVER_GRAINS = { hour: ['week', 'day', '6h', 'hour'], day: ['week', 'day'] } as const;
export const TOTALS_GRAINS = { hour: ['day', 'hour'], day: ['day'] } as const;

/**
 * A cover (segments, totalsSegments) has at most two segments of each grain (the coarsest grain's whole buckets in
 * one, each finer grain's on either side), so it fits fixed slots: two per grain of `grains`, in that order.
 */
const SLOTS_PER_GRAIN = 2;

/**
 * The bounds of `segs` in the slots of `grains` (slotConditions): [from, to] of each slot, in epoch ms; an unused
 * slot is empty (from = to).
 */
export function slotBounds(segs: Segment[], grains: readonly CoverGrain[]): number[] {
  return grains.flatMap((grain) => {
    const of = segs.filter((s) => s.grain === grain);
    if (of.length > SLOTS_PER_GRAIN || segs.some((s) => !grains.includes(s.grain as CoverGrain))) {
      throw new Error(`segments do not fit the slots of ${grains.join(', ')}`);
    }
    return Array.from({ length: SLOTS_PER_GRAIN }, (_, i) => {
      const s = of[i];
      return s ? [s.from, s.to] : [0, 0];
    }).flat();
  });
}

/**
 * segmentConditions over the slots of `grains` whose bounds are the elements `first`.. of the timestamptz[] `bounds`
 * (slotBounds): one statement text for every range, so that a function plans it once.
 */
export function slotConditions(grains: readonly CoverGrain[], bounds: string, first: number): SQL[] {
  return grains.flatMap((grain, g) =>
    Array.from({ length: SLOTS_PER_GRAIN }, (_, i) => {
      const at = first + 2 * (SLOTS_PER_GRAIN * g + i);
      return sql`(grain = ${lit(grain)} AND bucket >= ${sql.raw(`${bounds}[${at}]`)} AND bucket < ${sql.raw(`${bounds}[${at + 1}]`)})`;
    }),
  );
}

/** A range widened to whole units of `grain` (at least one). */
export function align(from: Date, to: Date, grain: Grain) {
  const step = STEP[grain];
  const f = floorTo(from.getTime(), step);
  const t = Math.max(ceilTo(to.getTime(), step), f + step);
  return { from: new Date(f), to: new Date(t) };
}

/** A time range widened to whole hours, and the condition selecting the call rollup rows covering it. */
export function rangeOf(from: Date, to: Date, _align: 'hour' = 'hour') {
  const r = align(from, to, 'hour');
  const segs = segments(r.from.getTime(), r.to.getTime(), 'hour');
  return { ...r, rollupWhere: segmentsWhere(segs) };
}

/**
 * Whether retention has removed stored events from the range [from, to) (null: unbounded on that side): a dropped
 * day that held events (its `events.partition_dropped` audit record counts rows) and overlaps the range. The audit
 * log is append-only, so this is what retention really removed, not what the configuration implies: a new
 * deployment, or a range that never held events, says nothing.
 */
export const droppedWithin = (from: SQL | null, to: SQL | null): SQL => sql`EXISTS (SELECT 1 FROM audit_logs a
  WHERE a.action_type = 'events.partition_dropped' AND (a.metadata->>'rows')::bigint > 0
    AND ${from ? sql`(a.metadata->>'to')::timestamptz > ${from}` : sql`TRUE`}
    AND ${to ? sql`(a.metadata->>'from')::timestamptz < ${to}` : sql`TRUE`})`;

/**
 * What a read of events says when retention has removed events it would have returned (`reaches`, from
 * droppedWithin): where the stored events stop (archived_before, the retention cutoff) and where the older ones are
 * (archive_location: the archive's, or null when none is configured and they were deleted). Never a silent empty
 * page.
 */
export function retentionNotice(
  config: Pick<Config, 'events'>,
  reaches: boolean,
): { archived_before?: string; archive_location?: string | null } {
  if (!reaches) return {};
  return {
    archived_before: eventRetentionCutoff(config).toISOString(),
    archive_location: archiveLocation(config.events.archive),
  };
}
