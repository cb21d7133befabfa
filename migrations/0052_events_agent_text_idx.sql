-- The event browser's text search within one agent: the events that carry a text, by agent and newest first, so that
-- a page walks only that agent's texts instead of every agent's (the text index alone still serves a search without
-- an agent). Partial like the text index, so events without a text (most of them) add nothing to ingest.
CREATE INDEX IF NOT EXISTS observability_events_agent_text_idx
  ON observability_events (agent_type, event_time DESC NULLS LAST, id DESC NULLS LAST)
  WHERE deny_reason IS NOT NULL OR error_message IS NOT NULL;
