CREATE TABLE "policy_fetches" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"version" integer NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policy_versions" (
	"version" integer PRIMARY KEY NOT NULL,
	"document" jsonb NOT NULL,
	"document_hash" text NOT NULL,
	"reason" text NOT NULL,
	"created_by_id" text NOT NULL,
	"created_by_email" text NOT NULL,
	"restored_from" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "policy_fetches" ADD CONSTRAINT "policy_fetches_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "policy_fetches_version_idx" ON "policy_fetches" USING btree ("version");