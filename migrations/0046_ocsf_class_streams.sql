-- The streams of the OCSF classes other than API Activity (shared/exports/delivery/classes.ts): a cursor per
-- destination and class, and the positions they keep: the transaction of a device's last inventory report, and the
-- inserting transaction of a usage event (the column's default). The access changes are read by the audit log's seq.
CREATE TABLE "export_class_cursors" (
	"destination_id" uuid NOT NULL,
	"class_key" text NOT NULL,
	"position" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_success_at" timestamp with time zone,
	"last_error" text,
	"last_error_permanent" boolean DEFAULT false NOT NULL,
	"last_status" integer,
	"delivered" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "export_class_cursors_destination_id_class_key_pk" PRIMARY KEY("destination_id","class_key")
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "inventory_xid" "xid8";--> statement-breakpoint
ALTER TABLE "request_usage_events" ADD COLUMN "export_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "export_class_cursors" ADD CONSTRAINT "export_class_cursors_destination_id_export_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."export_destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "devices_inventory_xid_idx" ON "devices" USING btree ("inventory_xid","id") WHERE "devices"."inventory_xid" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "request_usage_events_export_xid_idx" ON "request_usage_events" USING btree ("export_xid","id");
--> statement-breakpoint
-- Inventories already reported take this transaction as their position; usage events already stored took it from
-- the column's default.
UPDATE "devices" SET "inventory_xid" = pg_current_xact_id() WHERE "last_inventory_at" IS NOT NULL;--> statement-breakpoint
-- The destinations made before: each class from the start of its source, since they never had any of it.
INSERT INTO "export_class_cursors" ("destination_id", "class_key", "position")
  SELECT d.id, k.class_key, k.position FROM "export_destinations" d CROSS JOIN (VALUES
    ('deviceInventory', '0:00000000-0000-0000-0000-000000000000'),
    ('softwareInventory', '0:00000000-0000-0000-0000-000000000000'),
    ('userAccess', '0'),
    ('datastoreActivity', '0:00000000-0000-0000-0000-000000000000')) AS k (class_key, position);
