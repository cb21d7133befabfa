ALTER TABLE "alerts" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- An alert acknowledged before this column existed has had that one change.
UPDATE "alerts" SET "revision" = 1 WHERE "acknowledged_at" IS NOT NULL;
