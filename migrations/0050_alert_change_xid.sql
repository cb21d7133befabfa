-- The Detection Finding stream (shared/exports/delivery/classes.ts): an alert's position is the transaction of its
-- last change of state, the column's default on insert and set again by its acknowledgement.
ALTER TABLE "alerts" ADD COLUMN "change_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
CREATE INDEX "alerts_change_xid_idx" ON "alerts" USING btree ("change_xid","id");--> statement-breakpoint
-- The destinations made before: the class from the start of its source, since they never had any of it.
INSERT INTO "export_class_cursors" ("destination_id", "class_key", "position")
  SELECT d.id, 'detectionFinding', '0:00000000-0000-0000-0000-000000000000' FROM "export_destinations" d;
