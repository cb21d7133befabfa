// The duration sketch that the call rollups, the series and the series totals carry (column duration_sketch, see
// shared/observability/duration-sketch.ts) and the percentiles the totals keep: one definition for the tables
// (shared/observability/tables.ts) and the SQL and JavaScript that read them.

/**
 * The sketch's relative accuracy: a duration in bucket i, (gamma^(i-1), gamma^i] ms, is reported within SKETCH_ALPHA
 * of it. Below the promised 2 %, which leaves room for rounding reported percentiles to 0.001 ms
 * (shared/observability/duration-sketch.ts).
 */
export const SKETCH_ALPHA = 0.018;
export const SKETCH_GAMMA = (1 + SKETCH_ALPHA) / (1 - SKETCH_ALPHA);

/** The percentiles observability_series_totals keeps per bucket (duration_percentiles), in this order. */
export const SERIES_TOTALS_PERCENTILES = [0.5, 0.95, 0.99] as const;

/** The SQL function that reads percentiles from a sketch (the generated column of observability_series_totals). */
export const SKETCH_PERCENTILES_FUNCTION = 'obs_sketch_percentiles';
