-- Events partitioned by day of event_time (issue 18, item 1). Design: README, "Admin observability" (Partitions),
-- and docs/operations.md.
--
-- Keys of a partitioned table must hold the partition key, so the primary key is (id, event_time) and the dedup key
-- is (device_id, event_id, event_time). A retried event carries its own event_time again, whatever day it is resent
-- on, so it meets its first copy in the same partition and ON CONFLICT still counts it as a duplicate.
--
-- Daily partitions observability_events_pYYYYMMDD cover [day, day + 1) in UTC; observability_events_default takes
-- any event outside the partitions created so far (a clock far off, a backfill), so no event is refused or lost.
-- observability_events_maintain() (the schedule observability/partitions) creates partitions ahead and moves rows of
-- a day out of the default partition when that day gets its own.
--
-- The conversion copies every row into the new table (ids, ingest_xid and all), in this one migration transaction.
ALTER TABLE observability_events RENAME TO observability_events_unpartitioned;
--> statement-breakpoint
ALTER SEQUENCE observability_events_id_seq RENAME TO observability_events_unpartitioned_id_seq;
--> statement-breakpoint
ALTER TABLE observability_events_unpartitioned DROP CONSTRAINT observability_events_pkey;
--> statement-breakpoint
DROP INDEX observability_events_device_event_key, observability_events_time_idx, observability_events_device_time_idx,
  observability_events_session_idx, observability_events_tool_time_idx, observability_events_agent_time_idx,
  observability_events_actor_time_idx, observability_events_not_allowed_idx, observability_events_deny_code_idx,
  observability_events_text_idx, observability_events_ingest_xid_idx;
--> statement-breakpoint
CREATE TABLE observability_events (
  id bigint GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME observability_events_id_seq) NOT NULL,
  event_id uuid,
  device_id uuid NOT NULL,
  serial_number text NOT NULL,
  source_ip text,
  received_at timestamp with time zone DEFAULT now() NOT NULL,
  event_time timestamp with time zone NOT NULL,
  agent_type text NOT NULL,
  mcp_name text NOT NULL,
  tool text NOT NULL,
  event_type text NOT NULL,
  result text NOT NULL,
  deny_code text,
  deny_reason text,
  error_message text,
  rule_applied text,
  model text,
  session_id text,
  group_name text,
  actor_email text,
  tokens_in integer DEFAULT 0 NOT NULL,
  tokens_out integer DEFAULT 0 NOT NULL,
  duration_ms integer DEFAULT 0 NOT NULL,
  skills jsonb DEFAULT '[]'::jsonb NOT NULL,
  prompt text,
  prompt_truncated boolean DEFAULT false NOT NULL,
  metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
  ingest_xid xid8,
  CONSTRAINT observability_events_pkey PRIMARY KEY (id, event_time),
  CONSTRAINT observability_events_result_check CHECK (result in ('allowed', 'denied', 'error')),
  CONSTRAINT observability_events_type_check CHECK (event_type in ('invocation', 'result', 'error')),
  CONSTRAINT observability_events_device_id_devices_id_fk FOREIGN KEY (device_id) REFERENCES devices (id)
    ON DELETE CASCADE
) PARTITION BY RANGE (event_time);
--> statement-breakpoint
CREATE UNIQUE INDEX observability_events_device_event_key ON observability_events (device_id, event_id, event_time);
--> statement-breakpoint
CREATE INDEX observability_events_time_idx ON observability_events (event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX observability_events_device_time_idx
  ON observability_events (device_id, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX observability_events_session_idx ON observability_events (session_id, event_time, id);
--> statement-breakpoint
CREATE INDEX observability_events_tool_time_idx
  ON observability_events (mcp_name, tool, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX observability_events_agent_time_idx
  ON observability_events (agent_type, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX observability_events_actor_time_idx
  ON observability_events (actor_email, event_time DESC NULLS LAST, id DESC NULLS LAST);
--> statement-breakpoint
CREATE INDEX observability_events_not_allowed_idx
  ON observability_events (result, event_time DESC NULLS LAST, id DESC NULLS LAST) WHERE result <> 'allowed';
--> statement-breakpoint
CREATE INDEX observability_events_deny_code_idx
  ON observability_events (deny_code, event_time DESC NULLS LAST, id DESC NULLS LAST) WHERE deny_code IS NOT NULL;
--> statement-breakpoint
CREATE INDEX observability_events_text_idx ON observability_events (event_time DESC NULLS LAST, id DESC NULLS LAST)
  WHERE deny_reason IS NOT NULL OR error_message IS NOT NULL;
--> statement-breakpoint
CREATE INDEX observability_events_ingest_xid_idx ON observability_events (ingest_xid);
--> statement-breakpoint
CREATE TABLE observability_events_default PARTITION OF observability_events DEFAULT;
--> statement-breakpoint
-- The partition of one UTC day, unless it exists. PostgreSQL refuses a partition whose range has rows in the default
-- partition, so those rows move: the default partition is detached, the day's partition created, the rows moved
-- (ids and ingest_xid kept, so the rollup fold neither misses nor repeats them) and the default attached again.
-- Returns whether it created the partition.
CREATE OR REPLACE FUNCTION observability_events_add_partition(p_day date) RETURNS boolean
LANGUAGE plpgsql AS $part$
DECLARE
  part text := 'observability_events_p' || to_char(p_day, 'YYYYMMDD');
  lo timestamptz := (to_char(p_day, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz;
  hi timestamptz := (to_char(p_day + 1, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz;
  ddl text;
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  ddl := format('CREATE TABLE %I PARTITION OF observability_events FOR VALUES FROM (%L) TO (%L)', part,
    to_char(p_day, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(p_day + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
  IF EXISTS (SELECT 1 FROM observability_events_default WHERE event_time >= lo AND event_time < hi) THEN
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
--> statement-breakpoint
-- The scheduled maintenance: the partitions of p_today .. p_today + p_ahead, and of every day from p_today - p_back
-- that has rows in the default partition. One run at a time (an advisory lock). Returns how many partitions it
-- created and how many rows the default partition still holds (events outside that window).
CREATE OR REPLACE FUNCTION observability_events_maintain(p_today date, p_ahead integer, p_back integer,
  OUT created integer, OUT stray bigint)
LANGUAGE plpgsql AS $maintain$
DECLARE
  d date;
BEGIN
  PERFORM pg_advisory_xact_lock(7311982411);
  created := 0;
  FOR d IN
    SELECT g::date FROM generate_series(p_today::timestamp, (p_today + p_ahead)::timestamp, interval '1 day') AS g
    UNION
    SELECT DISTINCT (event_time AT TIME ZONE 'UTC')::date FROM observability_events_default
    WHERE event_time >= (to_char(p_today - p_back, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz
      AND event_time < (to_char(p_today + p_ahead + 1, 'YYYY-MM-DD') || ' 00:00:00+00')::timestamptz
    ORDER BY 1
  LOOP
    IF observability_events_add_partition(d) THEN
      created := created + 1;
    END IF;
  END LOOP;
  SELECT count(*) INTO stray FROM observability_events_default;
END
$maintain$;
--> statement-breakpoint
-- A partition for every day that holds events today, and the week ahead, before the copy: no row lands in the
-- default partition on the way.
SELECT count(*) FILTER (WHERE observability_events_add_partition(d)) FROM (
  SELECT DISTINCT (event_time AT TIME ZONE 'UTC')::date AS d FROM observability_events_unpartitioned
  UNION SELECT (current_date + g)::date FROM generate_series(0, 7) AS g) AS days;
--> statement-breakpoint
INSERT INTO observability_events (id, event_id, device_id, serial_number, source_ip, received_at, event_time,
  agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
  session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata,
  ingest_xid) OVERRIDING SYSTEM VALUE
SELECT id, event_id, device_id, serial_number, source_ip, received_at, event_time, agent_type, mcp_name, tool,
  event_type, result, deny_code, deny_reason, error_message, rule_applied, model, session_id, group_name, actor_email,
  tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata, ingest_xid
FROM observability_events_unpartitioned;
--> statement-breakpoint
SELECT setval('observability_events_id_seq', coalesce((SELECT max(id) FROM observability_events_unpartitioned), 1),
  (SELECT count(*) > 0 FROM observability_events_unpartitioned));
--> statement-breakpoint
DROP TABLE observability_events_unpartitioned;
