-- The rollup fold passes transactions still running instead of stopping below the oldest one: it remembers them in
-- pending_xids and folds each once it has finished (shared/domain/observability-rollups.ts). Every event of a
-- transaction below the current watermark has been folded, so the list starts empty. The fold takes a bound
-- (max_events) from the next migration on: the function without it goes.
ALTER TABLE "observability_fold_state" ADD COLUMN "pending_xids" "xid8"[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
DROP FUNCTION observability_fold();
