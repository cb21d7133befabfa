-- Data-access requests (issue 5): an Idempotency-Key replay must carry the same request. The SHA-256 of the first
-- body (its validated form, RFC 8785 canonical JSON) is kept with the key; a retry with the same key and another body
-- is refused (422 idempotency_key_reused). Rows created before this column have NULL and replay as before.
ALTER TABLE "requests" ADD COLUMN IF NOT EXISTS "idempotency_body_sha256" text;
