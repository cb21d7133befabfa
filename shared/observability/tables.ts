// Tables of the admin observability area, declared for drizzle (typed queries, and part of drizzle-kit's
// schema): created by the hand-written migrations/0002_observability.sql and migrations/0003_observability_series.sql;
// their duration sketches (shared/observability/duration-sketch.ts) since migrations/0038.
// test/integration/core/schema-drift.test.ts holds these declarations and the migrated database to the same columns.
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { xid8 } from '../core/db/column-types.ts';
import { SERIES_TOTALS_PERCENTILES, SKETCH_PERCENTILES_FUNCTION } from '../core/db/histogram.ts';

/**
 * The durations' sketch (shared/observability/duration-sketch.ts): integer[][], row 1 the bucket keys ascending, row 2
 * their counts; NULL without durations.
 */
const sketchColumns = { durationSketch: integer('duration_sketch').array() };

/**
 * Hourly, 6-hourly, daily and weekly (ISO) rollups of observability_events, maintained by the fold
 * (observability_fold(), shared/observability/rollups/rollups.ts).
 * kind 'call' rows (all four grains) are keyed by agent, MCP, tool, event type, result, deny code, rule and model and carry
 * a duration sketch; kind 'tool' rows (the same grains) are the call rows of a bucket summed per MCP server and tool,
 * so that a summary merges a few sketches per tool; kind 'actor' rows (daily and weekly) are keyed by actor and group.
 * Absent values are ''.
 */
export const observabilityRollups = pgTable(
  'observability_rollups',
  {
    grain: text('grain').notNull(),
    kind: text('kind').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'date' }).notNull(),
    agentType: text('agent_type').notNull().default(''),
    mcpName: text('mcp_name').notNull().default(''),
    tool: text('tool').notNull().default(''),
    eventType: text('event_type').notNull().default(''),
    result: text('result').notNull().default(''),
    denyCode: text('deny_code').notNull().default(''),
    ruleApplied: text('rule_applied').notNull().default(''),
    model: text('model').notNull().default(''),
    actorEmail: text('actor_email').notNull().default(''),
    groupName: text('group_name').notNull().default(''),
    calls: bigint('calls', { mode: 'number' }).notNull().default(0),
    denied: bigint('denied', { mode: 'number' }).notNull().default(0),
    errors: bigint('errors', { mode: 'number' }).notNull().default(0),
    tokensIn: bigint('tokens_in', { mode: 'number' }).notNull().default(0),
    tokensOut: bigint('tokens_out', { mode: 'number' }).notNull().default(0),
    durationSum: bigint('duration_sum', { mode: 'number' }).notNull().default(0),
    durationMax: integer('duration_max').notNull().default(0),
    ...sketchColumns,
  },
  (t) => [
    uniqueIndex('observability_rollups_key').on(
      t.grain,
      t.kind,
      t.bucket,
      t.agentType,
      t.mcpName,
      t.tool,
      t.eventType,
      t.result,
      t.denyCode,
      t.ruleApplied,
      t.model,
      t.actorEmail,
      t.groupName,
    ),
    check('observability_rollups_grain_check', sql`${t.grain} in ('hour', '6h', 'day', 'week')`),
    check('observability_rollups_kind_check', sql`${t.kind} in ('call', 'tool', 'actor')`),
  ],
);

/** The measures of a series bucket (observability_series and its totals). */
const seriesMeasureColumns = {
  calls: bigint('calls', { mode: 'number' }).notNull().default(0),
  denied: bigint('denied', { mode: 'number' }).notNull().default(0),
  errors: bigint('errors', { mode: 'number' }).notNull().default(0),
  tokensIn: bigint('tokens_in', { mode: 'number' }).notNull().default(0),
  tokensOut: bigint('tokens_out', { mode: 'number' }).notNull().default(0),
  durationMax: integer('duration_max').notNull().default(0),
  ...sketchColumns,
};

/**
 * Calls, denies, errors, tokens, the longest duration and the duration sketch (as the call rollups) per
 * minute, hour and day, keyed by event type and result: the summary's time series and its per-bucket percentiles.
 * Maintained by the fold with observability_rollups (duration_max since migration 0020, the sketch since 0038).
 */
export const observabilitySeries = pgTable(
  'observability_series',
  {
    grain: text('grain').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'date' }).notNull(),
    eventType: text('event_type').notNull(),
    result: text('result').notNull(),
    ...seriesMeasureColumns,
  },
  (t) => [
    primaryKey({ name: 'observability_series_pkey', columns: [t.grain, t.bucket, t.eventType, t.result] }),
    // The minute series in bucket order (a 24-hour minute summary groups ~7,000 rows by bucket). On the primary key
    // the planner prices a walk by the correlation of `grain` with the table's order, which is low, and reads the
    // rows by bitmap and sorts them, which is slower than this index walk. Buckets and grains are never updated, so
    // the fold's upserts stay HOT.
    index('observability_series_minute_idx').on(t.bucket).where(sql`${t.grain} = 'minute'`),
    check('observability_series_grain_check', sql`${t.grain} in ('minute', 'hour', 'day')`),
  ],
);

/**
 * The series over all event types and results: one row per minute, hour and day with the measures, the longest
 * duration and the sketch merged over the bucket's observability_series rows, and the bucket's p50 / p95 / p99
 * (duration_percentiles) stored beside them, computed from the sketch by obs_sketch_percentiles (the SQL twin of
 * sketchPercentiles) whenever the fold changes the row. The summary's series with no filter reads these (a 24-hour
 * minute series: 1,440 rows and three numbers a bucket, instead of merging the sketches of ~7,000 rows). Maintained
 * by the fold with observability_series.
 */
export const observabilitySeriesTotals = pgTable(
  'observability_series_totals',
  {
    grain: text('grain').notNull(),
    bucket: timestamp('bucket', { withTimezone: true, mode: 'date' }).notNull(),
    ...seriesMeasureColumns,
    durationPercentiles: doublePrecision('duration_percentiles')
      .array()
      .generatedAlwaysAs(
        sql.raw(
          `${SKETCH_PERCENTILES_FUNCTION}(duration_sketch, '{${SERIES_TOTALS_PERCENTILES.join(',')}}', duration_max)`,
        ),
      ),
  },
  (t) => [
    primaryKey({ name: 'observability_series_totals_pkey', columns: [t.grain, t.bucket] }),
    check('observability_series_totals_grain_check', sql`${t.grain} in ('minute', 'hour', 'day')`),
  ],
);

/**
 * The rollup fold's watermark (one row): every event whose ingest_xid is below next_xid is in the rollups and the
 * series, except those of pending_xids, the transactions that were still running when the fold passed them; the
 * fold (observability_fold(), shared/observability/rollups/rollups.ts) adds the rest.
 */
export const observabilityFoldState = pgTable(
  'observability_fold_state',
  {
    id: boolean('id').primaryKey().default(true),
    nextXid: xid8('next_xid').notNull(),
    foldedAt: timestamp('folded_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    eventsFolded: bigint('events_folded', { mode: 'number' }).notNull().default(0),
    pendingXids: xid8('pending_xids').array().notNull().default(sql`'{}'`),
  },
  (t) => [check('observability_fold_state_single_row', sql`${t.id}`)],
);

/**
 * The event archive's watermark (one row): every hour before next_hour is archived, or had no event when the archive
 * passed it (shared/observability/archive/archive.ts). NULL until the first run, which starts at the oldest stored event. Each
 * run locks this row (FOR UPDATE SKIP LOCKED) per hour it archives, so overlapping runs never export the same hour
 * at once.
 */
export const observabilityArchiveState = pgTable(
  'observability_archive_state',
  {
    id: boolean('id').primaryKey().default(true),
    nextHour: timestamp('next_hour', { withTimezone: true, mode: 'date' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('observability_archive_state_single_row', sql`${t.id}`)],
);

/**
 * One row per archived hour: its row count, its manifest (as written next to its objects) and the hour's count in
 * observability_series when it was archived: a larger count later means events arrived late for the hour, which is
 * then archived again (its objects overwritten whole).
 */
export const observabilityArchiveHours = pgTable('observability_archive_hours', {
  hour: timestamp('hour', { withTimezone: true, mode: 'date' }).primaryKey(),
  rows: bigint('rows', { mode: 'number' }).notNull(),
  foldedCalls: bigint('folded_calls', { mode: 'number' }).notNull(),
  manifest: jsonb('manifest').notNull(),
  archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
