-- The event archive (issue 18, item 3): its watermark and the manifest of every archived hour. Design: README,
-- "Admin observability" (Archive), and shared/domain/event-archive.ts. The one state row exists from the start, so
-- each run locks it (FOR UPDATE SKIP LOCKED) rather than racing to create it.
CREATE TABLE "observability_archive_hours" (
	"hour" timestamp with time zone PRIMARY KEY NOT NULL,
	"rows" bigint NOT NULL,
	"folded_calls" bigint NOT NULL,
	"manifest" jsonb NOT NULL,
	"archived_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "observability_archive_state" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"next_hour" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "observability_archive_state_single_row" CHECK ("observability_archive_state"."id")
);
--> statement-breakpoint
INSERT INTO "observability_archive_state" ("id", "next_hour") VALUES (true, NULL);
