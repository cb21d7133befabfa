-- Device counters (shared/domain/fleet-stats.ts): the fleet summary's device counts (total, online, offline, never
-- reported, new in 24 h) from a one-row total and per-minute counts kept by the fleet-stats fold, instead of counting
-- the devices table on indexes, which fell back to the heap wherever event batches had updated devices since the
-- last vacuum (bench:fleet, 100,000 devices). Every existing device starts dirty; the next migration (0019) counts
-- them all at once.
CREATE TABLE "fleet_device_minutes" (
	"kind" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"devices" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "fleet_device_minutes_pkey" PRIMARY KEY("kind","minute"),
	CONSTRAINT "fleet_device_minutes_kind_check" CHECK ("fleet_device_minutes"."kind" in ('seen', 'created'))
);
--> statement-breakpoint
CREATE TABLE "fleet_device_stats" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"devices" integer DEFAULT 0 NOT NULL,
	"never_reported" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "fleet_device_stats_single_row" CHECK ("fleet_device_stats"."id")
);
--> statement-breakpoint
DROP INDEX "devices_never_reported_idx";--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "stats_counted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "stats_seen_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "stats_dirty" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "devices_stats_dirty_idx" ON "devices" USING btree ("id") WHERE "devices"."stats_dirty";--> statement-breakpoint
CREATE INDEX "devices_stats_seen_idx" ON "devices" USING btree ("stats_seen_at");--> statement-breakpoint
INSERT INTO "fleet_device_stats" ("id") VALUES (true);