-- The fleet summary's device counts without reading the devices table (shared/domain/fleet.ts fleetSummary): the
-- devices that never reported, on an index that holds only them.
CREATE INDEX "devices_never_reported_idx" ON "devices" USING btree ("last_seen_at") WHERE "devices"."last_inventory_at" IS NULL AND "devices"."last_event_at" IS NULL;