-- The device list's sort orders as indexes, each with its tie-break (shared/domain/fleet.ts listDevices): a page at
-- 100,000 devices is an index range in every order (bench:fleet). (created_at, id) replaces the index on created_at.
DROP INDEX "devices_created_at_idx";--> statement-breakpoint
CREATE INDEX "devices_last_seen_sort_idx" ON "devices" USING btree (coalesce("last_seen_at", 'epoch'::timestamptz),"id");--> statement-breakpoint
CREATE INDEX "devices_created_sort_idx" ON "devices" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "devices_serial_sort_idx" ON "devices" USING btree ("serial_number","id");