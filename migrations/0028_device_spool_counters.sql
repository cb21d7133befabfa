ALTER TABLE "devices" ADD COLUMN "spool_dropped" bigint;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "spool_torn" bigint;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "spool_refused" bigint;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "spool_reported_at" timestamp with time zone;