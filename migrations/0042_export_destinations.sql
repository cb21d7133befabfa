CREATE TABLE "export_cursors" (
	"destination_id" uuid PRIMARY KEY NOT NULL,
	"cursor_xid" "xid8" NOT NULL,
	"cursor_id" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"last_error" text,
	"last_error_permanent" boolean DEFAULT false NOT NULL,
	"last_status" integer,
	"delivered" bigint DEFAULT 0 NOT NULL,
	"resent" bigint DEFAULT 0 NOT NULL,
	"replayed_from" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "export_destinations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_ref" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "export_destinations_kind_check" CHECK (kind in ('otlp_http', 'splunk_hec', 'webhook', 'security_lake'))
);
--> statement-breakpoint
ALTER TABLE "export_cursors" ADD CONSTRAINT "export_cursors_destination_id_export_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."export_destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "export_destinations_name_key" ON "export_destinations" USING btree ("name");