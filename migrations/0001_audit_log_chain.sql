-- Audit records are append-only: the service never updates or deletes them, and the database refuses it too, so
-- that a bug or a compromised handler cannot rewrite history (TRUNCATE is refused as well).
CREATE OR REPLACE FUNCTION audit_logs_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_logs is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_logs_no_update_delete BEFORE UPDATE OR DELETE ON audit_logs
  FOR EACH ROW EXECUTE FUNCTION audit_logs_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON audit_logs
  FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_refuse_change();
--> statement-breakpoint
CREATE SEQUENCE audit_logs_chain_seq;
--> statement-breakpoint
-- The hash chain. The lock is held to the end of the inserting transaction, so the next writer waits and then
-- (READ COMMITTED: each statement in plpgsql takes a fresh snapshot) sees this record as the last one. `seq` is
-- drawn after the lock, so seq order is chain order. NEW.hash arrives as the content hash computed by the service.
CREATE OR REPLACE FUNCTION audit_logs_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last_hash text;
BEGIN
  PERFORM pg_advisory_xact_lock(4120774301);
  SELECT hash INTO last_hash FROM audit_logs ORDER BY seq DESC LIMIT 1;
  NEW.seq := nextval('audit_logs_chain_seq');
  NEW.prev_hash := coalesce(last_hash, '');
  NEW.hash := encode(sha256(convert_to(NEW.prev_hash || ':' || NEW.hash, 'UTF8')), 'hex');
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_logs_chain BEFORE INSERT ON audit_logs
  FOR EACH ROW EXECUTE FUNCTION audit_logs_chain();
