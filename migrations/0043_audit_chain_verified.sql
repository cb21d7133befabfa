CREATE TABLE "audit_chain_verified" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL,
	"count" bigint NOT NULL,
	"verified_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "audit_chain_verified_single_row" CHECK ("audit_chain_verified"."id")
);
