-- Database roles (docs/operations.md, "Database roles"). Migrations run as the owner, who owns every table, function
-- and partition. The service connects as `<database>_service`, made here: DML on the tables, no DDL on them, no role
-- management. What it needs beyond that runs in SECURITY DEFINER functions owned by the owner, each doing one thing
-- on names it checks: partition maintenance, dropping a daily partition (retention), and creating and dropping the
-- per-request `req_<id>_reader` roles. Roles are cluster-wide, so the service role's name carries the database's:
-- databases side by side on one server (tests run many) never share one.
DO $roles$
DECLARE
  svc text := left(current_database(), 55) || '_service';
BEGIN
  IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = svc) THEN
    EXECUTE format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT', svc);
  END IF;
  -- CREATE: the schema of each request environment (req_<id>, with its views) is the service's own.
  EXECUTE format('GRANT CONNECT, TEMPORARY, CREATE ON DATABASE %I TO %I', current_database(), svc);
  EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', svc);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', svc);
  EXECUTE format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO %I', svc);
  -- Tables and partitions the owner makes later (migrations, partition maintenance) get the same.
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', svc);
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO %I', svc);
  -- The migrations' own record is the owner's alone; the audit log is append-only for the service.
  EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON schema_migrations FROM %I', svc);
  EXECUTE format('REVOKE UPDATE, DELETE ON audit_logs FROM %I', svc);
END
$roles$;
--> statement-breakpoint
-- Creating partitions (and moving the default partition's rows) takes the table's owner.
ALTER FUNCTION observability_events_maintain(date, integer, integer) SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION observability_events_add_partition(date) SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
-- Retention: detaches one daily partition and drops it, in the caller's transaction (which has checked and locked it).
CREATE OR REPLACE FUNCTION observability_events_drop_partition(p_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $drop$
BEGIN
  IF p_name !~ '^observability_events_p[0-9]{8}$' THEN
    RAISE EXCEPTION 'not a daily event partition: %', p_name USING ERRCODE = '42501';
  END IF;
  IF to_regclass(p_name) IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format('ALTER TABLE observability_events DETACH PARTITION %I', p_name);
  EXECUTE format('DROP TABLE %I', p_name);
END
$drop$;
--> statement-breakpoint
-- A request's reader role: no login, nothing but what the service (its creator's caller) grants it on its views. The
-- service becomes a member, to SET ROLE to it for the request's queries.
CREATE OR REPLACE FUNCTION request_role_create(p_role text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $create$
BEGIN
  IF p_role !~ '^req_[0-9a-f]{32}_reader$' THEN
    RAISE EXCEPTION 'not a request role: %', p_role USING ERRCODE = '42501';
  END IF;
  EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE', p_role);
  EXECUTE format('GRANT %I TO %I', p_role, session_user);
END
$create$;
--> statement-breakpoint
-- Drops a request's reader role; nothing to drop is no error. Its grants went with its schema (DROP SCHEMA … CASCADE).
CREATE OR REPLACE FUNCTION request_role_drop(p_role text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $dropr$
BEGIN
  IF p_role !~ '^req_[0-9a-f]{32}_reader$' THEN
    RAISE EXCEPTION 'not a request role: %', p_role USING ERRCODE = '42501';
  END IF;
  EXECUTE format('DROP ROLE IF EXISTS %I', p_role);
END
$dropr$;
--> statement-breakpoint
DO $grants$
DECLARE
  svc text := left(current_database(), 55) || '_service';
  fn text;
BEGIN
  FOREACH fn IN ARRAY ARRAY['observability_events_maintain(date, integer, integer)',
    'observability_events_add_partition(date)', 'observability_events_drop_partition(text)',
    'request_role_create(text)', 'request_role_drop(text)']
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', fn, svc);
  END LOOP;
END
$grants$;
