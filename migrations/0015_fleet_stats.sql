-- Fleet counters (shared/domain/fleet-stats.ts): per agent type and per (MCP name, agent type, transport), kept by a
-- fold of the inventory rows not counted yet (stats_dirty), so the agents, MCPs and fleet-summary views read counters
-- instead of aggregating every inventory row (bench:fleet, 100,000 devices). Every existing row starts dirty; the
-- next migration (0016) counts them all at once (fleet_stats_rebuild).
CREATE TABLE "fleet_agent_stats" (
	"agent_type" text PRIMARY KEY NOT NULL,
	"devices" integer DEFAULT 0 NOT NULL,
	"first_seen_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "fleet_mcp_stats" (
	"name" text NOT NULL,
	"agent_type" text NOT NULL,
	"transport" text NOT NULL,
	"devices" integer DEFAULT 0 NOT NULL,
	"enabled_devices" integer DEFAULT 0 NOT NULL,
	"disabled_devices" integer DEFAULT 0 NOT NULL,
	"installs" integer DEFAULT 0 NOT NULL,
	"enabled_installs" integer DEFAULT 0 NOT NULL,
	"first_seen_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	CONSTRAINT "fleet_mcp_stats_pkey" PRIMARY KEY("name","agent_type","transport")
);
--> statement-breakpoint
CREATE TABLE "fleet_stats_state" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"folded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"rows_folded" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "fleet_stats_state_single_row" CHECK ("fleet_stats_state"."id")
);
--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD COLUMN "stats_present" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "inventory_agents" ADD COLUMN "stats_dirty" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "stats_present" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "stats_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "stats_transport" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "inventory_mcps" ADD COLUMN "stats_dirty" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "fleet_mcp_stats_filter_idx" ON "fleet_mcp_stats" USING btree ("agent_type","transport","name");--> statement-breakpoint
CREATE INDEX "inventory_agents_stats_dirty_idx" ON "inventory_agents" USING btree ("id") WHERE "inventory_agents"."stats_dirty";--> statement-breakpoint
CREATE INDEX "inventory_mcps_stats_dirty_idx" ON "inventory_mcps" USING btree ("device_id") WHERE "inventory_mcps"."stats_dirty";--> statement-breakpoint
INSERT INTO "fleet_stats_state" ("id") VALUES (true);