CREATE TABLE "inventory_mcp_tools" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_id" uuid NOT NULL,
	"agent_type" text NOT NULL,
	"mcp_name" text NOT NULL,
	"tool_name" text NOT NULL,
	"definition_hash" text NOT NULL,
	"source_type" text,
	"source_name" text,
	"source_version" text,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inventory_mcp_tools_hash_check" CHECK ("inventory_mcp_tools"."definition_hash" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
ALTER TABLE "inventory_mcp_tools" ADD CONSTRAINT "inventory_mcp_tools_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_mcp_tools_key" ON "inventory_mcp_tools" USING btree ("device_id","agent_type","mcp_name","tool_name","definition_hash");--> statement-breakpoint
CREATE INDEX "inventory_mcp_tools_server_tool_idx" ON "inventory_mcp_tools" USING btree ("mcp_name","tool_name");--> statement-breakpoint
CREATE INDEX "inventory_mcp_tools_source_tool_idx" ON "inventory_mcp_tools" USING btree ("source_type","source_name",coalesce("source_version", ''),"tool_name");