-- The device list's status filters on its sort indexes (shared/domain/fleet.ts listDevices): after each sort key and
-- its tie-break, the last-seen sort key and whether the device has reported, so a status (time-relative: no partial
-- index can hold it) is checked on the index entries instead of on each row read from the table, which wherever
-- reports had updated devices since the last vacuum cost a page read per device of another status (bench:fleet,
-- sort=serial status=offline with the first 10,000 serials online). Each replaces the index of the same name.
DROP INDEX "devices_last_seen_sort_idx";--> statement-breakpoint
DROP INDEX "devices_created_sort_idx";--> statement-breakpoint
DROP INDEX "devices_serial_sort_idx";--> statement-breakpoint
CREATE INDEX "devices_last_seen_sort_idx" ON "devices" USING btree (coalesce("last_seen_at", 'epoch'::timestamptz),"id",("last_inventory_at" IS NOT NULL OR "last_event_at" IS NOT NULL));--> statement-breakpoint
CREATE INDEX "devices_created_sort_idx" ON "devices" USING btree ("created_at","id",coalesce("last_seen_at", 'epoch'::timestamptz),("last_inventory_at" IS NOT NULL OR "last_event_at" IS NOT NULL));--> statement-breakpoint
CREATE INDEX "devices_serial_sort_idx" ON "devices" USING btree ("serial_number","id",coalesce("last_seen_at", 'epoch'::timestamptz),("last_inventory_at" IS NOT NULL OR "last_event_at" IS NOT NULL));