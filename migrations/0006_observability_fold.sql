-- The rollup fold (shared/domain/observability-rollups.ts): ingest stores events only, stamped with the transaction
-- that stored them (ingest_xid, written by ingest_events from the next migration on); observability_fold() adds the
-- events of finished transactions to the rollups and moves the watermark. Events already in the table keep a NULL
-- ingest_xid (the earlier ingest_events wrote their rollups), and the watermark starts at this migration's own
-- transaction: every event stored after it is folded, none before it twice. (Pending migrations are applied in one
-- transaction, so the new ingest_events and the watermark take effect together.)
CREATE TABLE "observability_fold_state" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"next_xid" "xid8" NOT NULL,
	"folded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"events_folded" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "observability_fold_state_single_row" CHECK ("observability_fold_state"."id")
);
--> statement-breakpoint
ALTER TABLE "observability_events" ADD COLUMN "ingest_xid" "xid8";--> statement-breakpoint
CREATE INDEX "observability_events_ingest_xid_idx" ON "observability_events" USING btree ("ingest_xid");--> statement-breakpoint
INSERT INTO "observability_fold_state" ("next_xid") VALUES (pg_current_xact_id());
