-- CLI sign-in consent (issue 19): a sign-in records who asks (the client_id the agent sends, RFC 6749 section 4.1.1)
-- and from where (the address and user agent of the browser that opened authorize), for the person who approves or
-- refuses it (shared/domain/cli-signin.ts); and a person may now refuse one (status refused). Sign-ins already stored
-- (alive for at most 10 minutes) get client_id '(not recorded)': the default is only for them, and is dropped.
ALTER TABLE "cli_signins" DROP CONSTRAINT "cli_signins_status_check";--> statement-breakpoint
ALTER TABLE "cli_signins" ADD COLUMN "client_id" text NOT NULL DEFAULT '(not recorded)';--> statement-breakpoint
ALTER TABLE "cli_signins" ALTER COLUMN "client_id" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "cli_signins" ADD COLUMN "source_ip" text;--> statement-breakpoint
ALTER TABLE "cli_signins" ADD COLUMN "user_agent" text;--> statement-breakpoint
ALTER TABLE "cli_signins" ADD CONSTRAINT "cli_signins_status_check" CHECK ("cli_signins"."status" in ('pending', 'approved', 'refused', 'used'));
