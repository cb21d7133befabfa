-- A new daily partition clones the events' foreign key to devices, and moving rows out of the default partition
-- detaches and re-attaches it: both lock devices as well as the events table. Writers lock devices first (a device
-- is looked up before its events are written), so taking the events table first could close a cycle with them and
-- the database would end one of the two. Here both locks are taken up front, devices first, and only for a moment:
-- when they are not free the day is skipped and the next maintenance run makes it (its rows wait in the default
-- partition meanwhile), so partition maintenance never fails a writer.
CREATE OR REPLACE FUNCTION observability_events_add_partition(p_day date) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '500ms' AS $part$
DECLARE
  part text := 'observability_events_p' || to_char(p_day, 'YYYYMMDD');
  lo timestamptz := (to_char(p_day, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz;
  hi timestamptz := (to_char(p_day + 1, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz;
  ddl text;
  strays boolean;
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  ddl := format('CREATE TABLE %I PARTITION OF observability_events FOR VALUES FROM (%L) TO (%L)', part,
    to_char(p_day, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(p_day + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
  strays := EXISTS (SELECT 1 FROM observability_events_default WHERE event_time >= lo AND event_time < hi);
  BEGIN
    IF strays THEN
      LOCK TABLE devices IN ACCESS EXCLUSIVE MODE;
    ELSE
      LOCK TABLE devices IN SHARE ROW EXCLUSIVE MODE;
    END IF;
    LOCK TABLE observability_events IN ACCESS EXCLUSIVE MODE;
  EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
    RETURN false;
  END;
  -- Under the lock nothing more can arrive; rows that arrived before it and need the stronger lock wait a run.
  IF to_regclass(part) IS NOT NULL OR (NOT strays AND EXISTS (
      SELECT 1 FROM observability_events_default WHERE event_time >= lo AND event_time < hi)) THEN
    RETURN false;
  END IF;
  IF strays THEN
    ALTER TABLE observability_events DETACH PARTITION observability_events_default;
    EXECUTE ddl;
    WITH moved AS (
      DELETE FROM observability_events_default WHERE event_time >= lo AND event_time < hi RETURNING *)
    INSERT INTO observability_events OVERRIDING SYSTEM VALUE SELECT * FROM moved;
    ALTER TABLE observability_events ATTACH PARTITION observability_events_default DEFAULT;
  ELSE
    EXECUTE ddl;
  END IF;
  RETURN true;
END
$part$;
