-- Sign-in throttling (issue 20, "Faults and abuse"): failed sign-ins per account, per source address, and per source
-- address at the CLI token exchange, with the lock they lead to. Every instance reads and updates the same rows
-- (shared/domain/signin-lockouts.ts); the background probe deletes rows whose failure window has passed.
CREATE TABLE "signin_lockouts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"failures" integer NOT NULL,
	"first_failure_at" timestamp with time zone NOT NULL,
	"last_failure_at" timestamp with time zone NOT NULL,
	"locked_at" timestamp with time zone,
	"locked_until" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "signin_lockouts_scope_check" CHECK ("signin_lockouts"."scope" in ('account', 'source', 'cli_source'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "signin_lockouts_scope_key" ON "signin_lockouts" USING btree ("scope","key");--> statement-breakpoint
CREATE INDEX "signin_lockouts_expires_idx" ON "signin_lockouts" USING btree ("expires_at");
