-- observability_read_tail: generated from shared/domain/observability-rollups.ts (readTailFunctionSql) by `npm run db:functions`; do not edit.
CREATE OR REPLACE FUNCTION observability_read_tail()
RETURNS TABLE (event_time timestamptz, agent_type text, mcp_name text, tool text, event_type text, result text,
  deny_code text, rule_applied text, model text, actor_email text, group_name text, tokens_in integer,
  tokens_out integer, duration_ms integer)
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $tail$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT e.event_time, e.agent_type, e.mcp_name, e.tool, e.event_type, e.result, e.deny_code,
      e.rule_applied, e.model, e.actor_email, e.group_name, e.tokens_in, e.tokens_out, e.duration_ms
    FROM observability_events e WHERE ((e.ingest_xid >= (SELECT next_xid FROM observability_fold_state) AND e.ingest_xid < coalesce((SELECT x.ingest_xid
      FROM observability_events x WHERE x.ingest_xid >= (SELECT next_xid FROM observability_fold_state) ORDER BY x.ingest_xid
      OFFSET 5000 LIMIT 1), '18446744073709551615'::xid8))
    OR e.ingest_xid = ANY ((SELECT pending_xids FROM observability_fold_state)::xid8[]));
END
$tail$;
