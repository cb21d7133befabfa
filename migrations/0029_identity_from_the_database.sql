-- Identity from the database: a token's person is read from users on every request, so an account can be
-- disabled (disabled_at), and an identity provider's people get a row of their own, found by their subject
-- (idp_subject); only local users' emails must be unique. Sign-in failures are counted per account and source address
-- together (scope account_source) instead of per account alone, which let anyone lock an account out: the old per
-- account counts go. A device stays with its owner until an admin releases it (released_at). The CLI sign-in counts
-- the sign-ins each address has open (source_key, shared/domain/signin-lockouts.ts sourceKey).
ALTER TABLE "signin_lockouts" DROP CONSTRAINT "signin_lockouts_scope_check";--> statement-breakpoint
DELETE FROM "signin_lockouts" WHERE "scope" = 'account';--> statement-breakpoint
DROP INDEX "users_email_key";--> statement-breakpoint
ALTER TABLE "cli_signins" ADD COLUMN "source_key" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "released_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "idp_subject" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "cli_signins_source_idx" ON "cli_signins" USING btree ("source_key","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_idp_subject_key" ON "users" USING btree ("idp_subject");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_key" ON "users" USING btree (lower("email")) WHERE "users"."idp_subject" IS NULL;--> statement-breakpoint
ALTER TABLE "signin_lockouts" ADD CONSTRAINT "signin_lockouts_scope_check" CHECK ("signin_lockouts"."scope" in ('account_source', 'source', 'cli_source'));