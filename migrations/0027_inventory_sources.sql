-- Inventory sources (issue 28): what the endpoint agent now derives on the laptop and reports. The agent's version on
-- the device; the client's version and whether its tool calls are captured on an agent; scope, source identity and
-- config fingerprint on an MCP server, all nullable (older agents report none of them). An MCP row is now one per
-- (device, agent type, name, scope, fingerprint), so the same name in two scopes or with two configs stays two rows.
DROP INDEX "inventory_mcps_device_agent_name_key";--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "agent_version" text;--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD COLUMN "version" text;--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD COLUMN "capture" text;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "scope" text;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "source_type" text;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "source_name" text;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "source_version" text;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "fingerprint" text;--> statement-breakpoint
CREATE INDEX "inventory_mcps_source_idx" ON "inventory_mcps" USING btree ("name","source_type","source_name",coalesce("source_version", '')) WHERE "inventory_mcps"."removed_at" IS NULL AND "inventory_mcps"."source_type" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_mcps_device_agent_name_key" ON "inventory_mcps" USING btree ("device_id","agent_type","name",coalesce("scope", ''),coalesce("fingerprint", ''));--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD CONSTRAINT "inventory_agents_capture_check" CHECK ("inventory_agents"."capture" in ('hooks', 'none'));--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD CONSTRAINT "inventory_mcps_source_type_check" CHECK ("inventory_mcps"."source_type" in ('npm', 'pypi', 'oci', 'executable', 'remote'));