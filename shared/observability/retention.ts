// The events' retention window: where stored events start (events.retention, by whole UTC days), and so the oldest
// event ingest takes. A module of its own, importing nothing that runs: the ingest function's bundle needs it.
import type { Config } from '../core/config/schema.ts';

export const DAY = 86_400_000;

/**
 * The instant before which events are past events.retention: the start of the UTC day that holds now - retention.
 * Partitions are whole days, so events from it on are still stored, and those before it are dropped (once the
 * maintenance has run); the pages say so (archived_before).
 */
export const eventRetentionCutoff = (config: Pick<Config, 'events'>, now: Date = new Date()): Date =>
  new Date(Math.floor((now.getTime() - config.events.retention) / DAY) * DAY);

/**
 * The oldest day an event may have, whatever events.retention says: the first day of the archive's Glue table
 * (infra/stack.ts, partition projection), so that Athena sees every event the service ever stored.
 */
export const OLDEST_EVENT_DAY = '2025-01-01';

/**
 * The oldest event_time ingest takes: the retention cutoff (an older event's day is dropped, or about to be), and never
 * before OLDEST_EVENT_DAY. So every stored event is within the window, its day is archived before it is dropped, and
 * the archive holds no day its Glue table does not show.
 */
export const oldestAcceptedEventTime = (config: Pick<Config, 'events'>, now: Date = new Date()): Date =>
  new Date(
    Math.max(eventRetentionCutoff(config, now).getTime(), Date.parse(`${OLDEST_EVENT_DAY}T00:00:00Z`)),
  );
