CREATE TABLE "alert_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"alert_id" uuid NOT NULL,
	"destination" text NOT NULL,
	"event" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "alert_deliveries_status_check" CHECK ("alert_deliveries"."status" in ('pending', 'delivered', 'dead'))
);
--> statement-breakpoint
CREATE TABLE "alert_devices" (
	"alert_id" uuid NOT NULL,
	"device_id" uuid NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "alert_devices_pkey" PRIMARY KEY("alert_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "alert_known_servers" (
	"identity" text PRIMARY KEY NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_pass_state" (
	"id" integer PRIMARY KEY NOT NULL,
	"watermark" timestamp with time zone NOT NULL,
	"watermark_id" uuid NOT NULL,
	"policy_version" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_server_state" (
	"device_id" uuid NOT NULL,
	"agent_type" text NOT NULL,
	"name" text NOT NULL,
	"scope" text NOT NULL,
	"source_type" text,
	"source_name" text,
	"source_version" text,
	CONSTRAINT "alert_server_state_pkey" PRIMARY KEY("device_id","agent_type","name","scope")
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"acknowledged_by" text,
	"acknowledge_note" text,
	CONSTRAINT "alerts_kind_check" CHECK (kind in ('new_server', 'version_changed', 'source_changed', 'denied_server', 'denied_spike', 'tool_definition_changed')),
	CONSTRAINT "alerts_status_check" CHECK ("alerts"."status" in ('open', 'acknowledged'))
);
--> statement-breakpoint
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_devices" ADD CONSTRAINT "alert_devices_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_devices" ADD CONSTRAINT "alert_devices_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_server_state" ADD CONSTRAINT "alert_server_state_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_deliveries_due_idx" ON "alert_deliveries" USING btree ("next_attempt_at") WHERE "alert_deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "alert_deliveries_status_idx" ON "alert_deliveries" USING btree ("status","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "alert_devices_device_idx" ON "alert_devices" USING btree ("device_id");--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_kind_subject_key" ON "alerts" USING btree ("kind","subject");--> statement-breakpoint
CREATE INDEX "alerts_first_seen_idx" ON "alerts" USING btree ("first_seen_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
-- The fleet as it is now is the baseline: what it already runs raises no new_server alert. Policy version -1 makes
-- the first pass check every present server against the policy in force (denied_server).
INSERT INTO "alert_known_servers" ("identity", "first_seen_at")
  SELECT coalesce("source_type" || ':' || "source_name", 'name:' || "name"), min("first_seen_at") FROM "inventory_mcps"
  GROUP BY 1;--> statement-breakpoint
INSERT INTO "alert_server_state" ("device_id", "agent_type", "name", "scope", "source_type", "source_name", "source_version")
  SELECT DISTINCT ON ("device_id", "agent_type", "name", coalesce("scope", '')) "device_id", "agent_type", "name",
    coalesce("scope", ''), "source_type", "source_name", "source_version"
  FROM "inventory_mcps" WHERE "removed_at" IS NULL
  ORDER BY "device_id", "agent_type", "name", coalesce("scope", ''), "last_seen_at" DESC;--> statement-breakpoint
INSERT INTO "alert_pass_state" ("id", "watermark", "watermark_id", "policy_version")
  SELECT 1, now(), '00000000-0000-0000-0000-000000000000',
    -1;
