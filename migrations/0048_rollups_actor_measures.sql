-- The summary's actor section reads its rows from this index alone, an index-only range scan per segment, instead of
-- the wide rollup rows (a month is tens of thousands of actor rows). Its cost: an update of an actor row changes
-- indexed columns, so it is no longer a HOT update; call and tool rows, most of the fold's updates, keep theirs.
DROP INDEX IF EXISTS observability_rollups_actor_grain_idx;
--> statement-breakpoint
CREATE INDEX observability_rollups_actor_grain_idx ON observability_rollups (grain, bucket, actor_email)
  INCLUDE (calls, denied, errors, tokens_in, tokens_out, duration_sum, duration_max) WHERE kind = 'actor';
