CREATE TABLE "audit_logs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	"action_type" text NOT NULL,
	"actor_email" text DEFAULT '' NOT NULL,
	"actor_id" text DEFAULT '' NOT NULL,
	"app_name" text DEFAULT '' NOT NULL,
	"container_id" text DEFAULT '' NOT NULL,
	"environment_id" text DEFAULT '' NOT NULL,
	"environment_name" text DEFAULT '' NOT NULL,
	"ip_address" text DEFAULT '' NOT NULL,
	"level" text DEFAULT 'info' NOT NULL,
	"resource_id" text DEFAULT '' NOT NULL,
	"resource_type" text DEFAULT '' NOT NULL,
	"stage" text DEFAULT '' NOT NULL,
	"source" text DEFAULT 'api' NOT NULL,
	"timestamp" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"prev_hash" text DEFAULT '' NOT NULL,
	"hash" text DEFAULT '' NOT NULL,
	CONSTRAINT "audit_logs_source_check" CHECK ("audit_logs"."source" in ('api', 'env-svc', 'logshipper'))
);
--> statement-breakpoint
CREATE TABLE "catalog_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"datasource_id" text NOT NULL,
	"datasource_name" text NOT NULL,
	"target_name" text DEFAULT '' NOT NULL,
	"target_location" text DEFAULT '' NOT NULL,
	"summary" text DEFAULT '' NOT NULL,
	"scan_policy" text DEFAULT '' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"schema" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cli_signins" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text NOT NULL,
	"code_challenge" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"user_subject" text,
	"user_email" text,
	"code_hash" text,
	"code_expires_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cli_signins_status_check" CHECK ("cli_signins"."status" in ('pending', 'approved', 'used'))
);
--> statement-breakpoint
CREATE TABLE "device_certificates" (
	"fingerprint" text PRIMARY KEY NOT NULL,
	"device_id" uuid NOT NULL,
	"certificate_pem" text NOT NULL,
	"not_before" timestamp with time zone NOT NULL,
	"not_after" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"replaced_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "device_signatures" (
	"signature_hash" text PRIMARY KEY NOT NULL,
	"fingerprint" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "devices" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"serial_number" text NOT NULL,
	"brand" text NOT NULL,
	"model" text NOT NULL,
	"owner_subject" text NOT NULL,
	"owner_email" text DEFAULT '' NOT NULL,
	"certificate_fingerprint" text NOT NULL,
	"certificate_pem" text NOT NULL,
	"key_type" text NOT NULL,
	"cert_not_before" timestamp with time zone NOT NULL,
	"cert_not_after" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone,
	"last_inventory_at" timestamp with time zone,
	"last_event_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "devices_key_type_check" CHECK ("devices"."key_type" in ('p256', 'ed25519'))
);
--> statement-breakpoint
CREATE TABLE "health_probes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "health_probes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"ran_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text NOT NULL,
	"duration_ms" integer NOT NULL,
	"checks" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "health_probes_status_check" CHECK ("health_probes"."status" in ('ok', 'degraded', 'unavailable'))
);
--> statement-breakpoint
CREATE TABLE "inventory_agents" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_id" uuid NOT NULL,
	"agent_type" text NOT NULL,
	"display_name" text DEFAULT '' NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"removed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "inventory_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "inventory_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"device_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"agent_type" text NOT NULL,
	"mcp_name" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inventory_changes_kind_check" CHECK ("inventory_changes"."kind" in ('agent_appeared', 'agent_disappeared', 'mcp_appeared', 'mcp_disappeared'))
);
--> statement-breakpoint
CREATE TABLE "inventory_mcps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_id" uuid NOT NULL,
	"agent_type" text NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean NOT NULL,
	"transport" text NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"removed_at" timestamp with time zone,
	CONSTRAINT "inventory_mcps_transport_check" CHECK ("inventory_mcps"."transport" in ('stdio', 'http', 'sse'))
);
--> statement-breakpoint
CREATE TABLE "observability_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "observability_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_id" uuid,
	"device_id" uuid NOT NULL,
	"serial_number" text NOT NULL,
	"source_ip" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"event_time" timestamp with time zone NOT NULL,
	"agent_type" text NOT NULL,
	"mcp_name" text NOT NULL,
	"tool" text NOT NULL,
	"event_type" text NOT NULL,
	"result" text NOT NULL,
	"deny_code" text,
	"deny_reason" text,
	"error_message" text,
	"rule_applied" text,
	"model" text,
	"session_id" text,
	"group_name" text,
	"actor_email" text,
	"tokens_in" integer DEFAULT 0 NOT NULL,
	"tokens_out" integer DEFAULT 0 NOT NULL,
	"duration_ms" integer DEFAULT 0 NOT NULL,
	"skills" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"prompt" text,
	"prompt_truncated" boolean DEFAULT false NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "observability_events_result_check" CHECK ("observability_events"."result" in ('allowed', 'denied', 'error')),
	CONSTRAINT "observability_events_type_check" CHECK ("observability_events"."event_type" in ('invocation', 'result', 'error'))
);
--> statement-breakpoint
CREATE TABLE "request_usage_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"request_id" uuid NOT NULL,
	"action_type" text NOT NULL,
	"ip_address" text,
	"timestamp" timestamp with time zone DEFAULT now() NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "requests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"title" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"business_justification" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"risk_level" text DEFAULT 'low' NOT NULL,
	"source" text DEFAULT 'api' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"valid_until" timestamp with time zone,
	"approved_at" timestamp with time zone,
	"approved_by" text,
	"approval_notes" text,
	"denial_reason" text,
	"external_ticket_id" text,
	"external_ticket_url" text,
	"datasource_names" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"environment_id" text,
	"environment_status" text,
	"request_template" jsonb,
	"requester_id" text NOT NULL,
	"requester_name" text DEFAULT '' NOT NULL,
	"requester_email" text DEFAULT '' NOT NULL,
	"scope" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tunnel" jsonb,
	"idempotency_key" text,
	CONSTRAINT "requests_status_check" CHECK ("requests"."status" in ('pending', 'approved', 'active', 'denied', 'revoked', 'expired')),
	CONSTRAINT "requests_risk_level_check" CHECK ("requests"."risk_level" in ('low', 'medium', 'high'))
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"password_hash" text,
	"roles" jsonb DEFAULT '["user"]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_certificates" ADD CONSTRAINT "device_certificates_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD CONSTRAINT "inventory_agents_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_changes" ADD CONSTRAINT "inventory_changes_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD CONSTRAINT "inventory_mcps_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "observability_events" ADD CONSTRAINT "observability_events_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "request_usage_events" ADD CONSTRAINT "request_usage_events_request_id_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_logs_seq_key" ON "audit_logs" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "audit_logs_timestamp_idx" ON "audit_logs" USING btree ("timestamp","id");--> statement-breakpoint
CREATE INDEX "audit_logs_created_at_idx" ON "audit_logs" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "audit_logs_action_idx" ON "audit_logs" USING btree ("action_type","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_actor_idx" ON "audit_logs" USING btree ("actor_email","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_resource_idx" ON "audit_logs" USING btree ("resource_type","resource_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_source_idx" ON "audit_logs" USING btree ("source","created_at");--> statement-breakpoint
CREATE INDEX "catalog_entries_datasource_idx" ON "catalog_entries" USING btree ("datasource_name","target_name");--> statement-breakpoint
CREATE INDEX "catalog_entries_created_at_idx" ON "catalog_entries" USING btree ("created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "cli_signins_code_hash_key" ON "cli_signins" USING btree ("code_hash");--> statement-breakpoint
CREATE INDEX "cli_signins_expires_idx" ON "cli_signins" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "device_certificates_device_idx" ON "device_certificates" USING btree ("device_id");--> statement-breakpoint
CREATE INDEX "device_signatures_expires_idx" ON "device_signatures" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_serial_brand_key" ON "devices" USING btree ("serial_number","brand");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_fingerprint_key" ON "devices" USING btree ("certificate_fingerprint");--> statement-breakpoint
CREATE INDEX "devices_owner_idx" ON "devices" USING btree ("owner_subject");--> statement-breakpoint
CREATE INDEX "devices_last_seen_idx" ON "devices" USING btree ("last_seen_at");--> statement-breakpoint
CREATE INDEX "devices_updated_at_idx" ON "devices" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "devices_created_at_idx" ON "devices" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "health_probes_ran_at_idx" ON "health_probes" USING btree ("ran_at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_agents_device_type_key" ON "inventory_agents" USING btree ("device_id","agent_type");--> statement-breakpoint
CREATE INDEX "inventory_agents_type_idx" ON "inventory_agents" USING btree ("agent_type");--> statement-breakpoint
CREATE INDEX "inventory_agents_last_seen_idx" ON "inventory_agents" USING btree ("last_seen_at");--> statement-breakpoint
CREATE INDEX "inventory_changes_at_idx" ON "inventory_changes" USING btree ("at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "inventory_changes_device_idx" ON "inventory_changes" USING btree ("device_id","at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_mcps_device_agent_name_key" ON "inventory_mcps" USING btree ("device_id","agent_type","name");--> statement-breakpoint
CREATE INDEX "inventory_mcps_name_idx" ON "inventory_mcps" USING btree ("name");--> statement-breakpoint
CREATE INDEX "inventory_mcps_last_seen_idx" ON "inventory_mcps" USING btree ("last_seen_at");--> statement-breakpoint
CREATE UNIQUE INDEX "observability_events_device_event_key" ON "observability_events" USING btree ("device_id","event_id");--> statement-breakpoint
CREATE INDEX "observability_events_time_idx" ON "observability_events" USING btree ("event_time" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "observability_events_device_time_idx" ON "observability_events" USING btree ("device_id","event_time" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "observability_events_session_idx" ON "observability_events" USING btree ("session_id","event_time","id");--> statement-breakpoint
CREATE INDEX "request_usage_events_request_idx" ON "request_usage_events" USING btree ("request_id","timestamp");--> statement-breakpoint
CREATE INDEX "requests_created_at_idx" ON "requests" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "requests_status_created_idx" ON "requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "requests_risk_created_idx" ON "requests" USING btree ("risk_level","created_at");--> statement-breakpoint
CREATE INDEX "requests_requester_created_idx" ON "requests" USING btree ("requester_id","created_at");--> statement-breakpoint
CREATE INDEX "requests_valid_until_idx" ON "requests" USING btree ("valid_until") WHERE "requests"."status" in ('approved', 'active');--> statement-breakpoint
CREATE UNIQUE INDEX "requests_idempotency_key" ON "requests" USING btree ("requester_id","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_key" ON "users" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "users_created_at_idx" ON "users" USING btree ("created_at");