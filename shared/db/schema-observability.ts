// Tables of the admin observability area (issue 4), declared for drizzle; created by migrations/0002_observability.sql
// (hand-written: it also defines the histogram aggregate obs_hist and obs_hist_sum).
import { sql } from 'drizzle-orm';
import { bigint, check, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** h1..h64: counts of durations in (1.25^(b-2), 1.25^(b-1)] ms (h1: <= 1 ms), see obs_duration_bucket; 0 is NULL. */
const histColumns = Object.fromEntries(
  Array.from({ length: 64 }, (_, i) => [`h${i + 1}`, integer(`h${i + 1}`)]),
);

/**
 * Hourly and daily rollups of observability_events, maintained by the ingest statement. kind 'call' rows (hourly,
 * daily, weekly) are keyed by agent, MCP, tool, event type, result, deny code, rule and model and carry a 64-bucket duration
 * histogram; kind 'actor' rows (daily and weekly) are keyed by actor and group. Absent values are ''.
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
    ...histColumns,
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
    check('observability_rollups_grain_check', sql`${t.grain} in ('hour', 'day', 'week')`),
    check('observability_rollups_kind_check', sql`${t.kind} in ('call', 'actor')`),
  ],
);
