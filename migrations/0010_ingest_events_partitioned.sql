-- ingest_events: generated from shared/domain/events.ts (ingestFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION ingest_events(p_fingerprint text, p_source_ip text,
  p_received_at timestamptz, p_latest timestamptz, p_signature_hash text, p_replay_until timestamptz, p_events json,
  OUT device uuid, OUT signature_ok boolean, OUT inserted integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $ingest$
BEGIN
  WITH d AS (SELECT id, serial_number FROM devices WHERE certificate_fingerprint = p_fingerprint),
      sig AS (INSERT INTO device_signatures (signature_hash, fingerprint, expires_at)
      SELECT p_signature_hash, p_fingerprint, p_replay_until WHERE EXISTS (SELECT 1 FROM d)
      ON CONFLICT DO NOTHING RETURNING 1),
      ins AS (
        INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, received_at, event_time,
          agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
          session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata,
          ingest_xid)
        SELECT e.event_id, d.id, d.serial_number, p_source_ip, p_received_at, e.event_time, e.agent_type,
          e.mcp_name, e.tool, e.event_type, e.result, e.deny_code, e.deny_reason, e.error_message, e.rule_applied,
          e.model, e.session_id, e.group_name, e.actor_email, e.tokens_in, e.tokens_out, e.duration_ms,
          coalesce(e.skills, '[]'::jsonb), e.prompt, e.prompt_truncated, coalesce(e.metadata, '{}'::jsonb),
          pg_current_xact_id()
        FROM json_to_recordset(p_events) AS e(event_id uuid, event_time timestamptz, agent_type text,
          mcp_name text, tool text, event_type text, result text, deny_code text, deny_reason text, error_message text,
          rule_applied text, model text, session_id text, group_name text, actor_email text, tokens_in int,
          tokens_out int, duration_ms int, skills jsonb, prompt text, prompt_truncated boolean, metadata jsonb)
          CROSS JOIN d
        WHERE EXISTS (SELECT 1 FROM sig)
        ON CONFLICT (device_id, event_id, event_time) DO NOTHING
        RETURNING 1),
      dev AS (
        UPDATE devices SET last_seen_at = p_received_at,
          last_event_at = greatest(coalesce(last_event_at, p_latest), p_latest)
        WHERE id = (SELECT id FROM d) AND EXISTS (SELECT 1 FROM sig) RETURNING 1)
      SELECT (SELECT id FROM d), EXISTS (SELECT 1 FROM sig), (SELECT count(*) FROM ins)::int
    INTO device, signature_ok, inserted;
END
$ingest$;
