// The duration histogram that the call rollups, the series and the series totals carry (columns h1..h64, see
// shared/domain/observability-rollups.ts) and the percentiles the totals keep: one definition for the tables
// (schema-observability.ts) and the SQL and JavaScript that read them.

/** Number of buckets of a duration histogram (columns h1..h64) and their growth factor (obs_duration_bucket). */
export const HIST_BUCKETS = 64;
export const HIST_FACTOR = 1.25;
/** h1, h2, ... h64. */
export const HIST_COLUMNS = Array.from({ length: HIST_BUCKETS }, (_, i) => `h${i + 1}`);

/** The percentiles observability_series_totals keeps per bucket (duration_percentiles), in this order. */
export const SERIES_TOTALS_PERCENTILES = [0.5, 0.95, 0.99] as const;
