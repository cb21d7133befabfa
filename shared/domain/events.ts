import { sql } from 'drizzle-orm';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import { queryRows } from '../db/query.ts';
import { textParam, tsParam, uuidParam } from '../db/sql-values.ts';
import { replayedRequest } from '../device/authenticate.ts';
import { payloadTooLarge } from '../http/errors.ts';
import type { Precheck, VerifiedDeviceRequest } from '../http/handler.ts';
import type { ObservabilityEventInput } from '../schemas/devices.ts';
import { signatureInsert } from './devices.ts';
import { rollupUpsertSql, seriesUpsertSql } from './observability-rollups.ts';

/** Truncates a prompt to `max` characters (code points, so no surrogate pair is cut in half). */
export function truncatePrompt(
  prompt: string | undefined,
  max: number,
): { prompt: string | null; truncated: boolean } {
  if (prompt === undefined) return { prompt: null, truncated: false };
  // Code points never outnumber UTF-16 code units: a prompt this short needs no counting.
  if (prompt.length <= max) return { prompt, truncated: false };
  const chars = Array.from(prompt);
  return chars.length > max
    ? { prompt: chars.slice(0, max).join(''), truncated: true }
    : { prompt, truncated: false };
}

/** 1..events.max_batch events per batch: more is 413 batch_too_large (the 1 MiB bound is the route's maxBody). */
export function checkBatchSize(config: Config, events: readonly unknown[]): void {
  if (events.length > config.events.max_batch) {
    throw payloadTooLarge(
      'batch_too_large',
      `A batch holds at most ${config.events.max_batch} events; this one has ${events.length}. Split it.`,
    );
  }
}

/**
 * The batch bound as a precheck of the events route: the handler stack runs it on the parsed body after the
 * signature and before validating every event, so that 1001 events with a bad one are 413, not 400.
 */
export const batchSizePrecheck: Precheck = (ctx, rawBody) => {
  const events = (rawBody as { events?: unknown } | undefined)?.events;
  if (Array.isArray(events)) checkBatchSize(ctx.config, events);
};

/**
 * POST /v1/devices/events: the whole batch in one set-based statement — the replay record, every event (expanded
 * from one json parameter by json_to_recordset, never one parameter per value; json, not jsonb: the text is read
 * once instead of being converted first, measurably faster for large batches), and the device's last-seen times. All or nothing. An event_id already stored for the device is counted as a duplicate, not stored again.
 * CTEs `roll` and `series` upsert the rollups (hourly, 6-hourly, daily, weekly) and the minute / hour / day series of
 * exactly the inserted rows (observability-rollups.ts).
 */
export async function ingestEvents(
  db: Db,
  config: Config,
  device: VerifiedDeviceRequest & { deviceId: string; serialNumber: string },
  events: readonly ObservabilityEventInput[],
  sourceIp: string,
) {
  checkBatchSize(config, events);
  const now = new Date();
  // Absent optional fields stay undefined: JSON.stringify leaves them out and json_to_recordset reads NULL.
  const rows = events.map((e) => {
    const { prompt, truncated } = truncatePrompt(e.prompt, config.events.prompt_max_chars);
    return {
      event_id: e.event_id,
      event_time: e.event_time,
      agent_type: e.agent_type,
      mcp_name: e.mcp_name,
      tool: e.tool,
      event_type: e.event_type,
      result: e.result,
      deny_code: e.deny_code,
      deny_reason: e.deny_reason,
      error_message: e.error_message,
      rule_applied: e.rule_applied,
      model: e.model,
      session_id: e.session_id,
      group_name: e.group,
      actor_email: e.actor_email,
      tokens_in: e.tokens_in,
      tokens_out: e.tokens_out,
      duration_ms: e.duration_ms,
      skills: e.skills,
      prompt,
      prompt_truncated: truncated,
      metadata: e.metadata,
    };
  });
  // By instant, not by text: event times may carry different offsets.
  let latestMs = Number.NEGATIVE_INFINITY;
  for (const r of rows) latestMs = Math.max(latestMs, Date.parse(r.event_time));
  const latest = new Date(latestMs).toISOString();
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  const [row] = await queryRows<{ ok: number; inserted: number }>(
    db,
    sql`WITH sig AS (${signatureInsert(device)}),
      ins AS (
        INSERT INTO observability_events (event_id, device_id, serial_number, source_ip, received_at, event_time,
          agent_type, mcp_name, tool, event_type, result, deny_code, deny_reason, error_message, rule_applied, model,
          session_id, group_name, actor_email, tokens_in, tokens_out, duration_ms, skills, prompt, prompt_truncated, metadata)
        SELECT e.event_id, ${uuidParam(device.deviceId)}, ${device.serialNumber}, ${textParam(sourceIp || null)},
          ${tsParam(now)}, e.event_time, e.agent_type, e.mcp_name, e.tool, e.event_type, e.result, e.deny_code,
          e.deny_reason, e.error_message, e.rule_applied, e.model, e.session_id, e.group_name, e.actor_email,
          e.tokens_in, e.tokens_out, e.duration_ms, coalesce(e.skills, '[]'::jsonb), e.prompt, e.prompt_truncated,
          coalesce(e.metadata, '{}'::jsonb)
        FROM json_to_recordset(${JSON.stringify(rows)}::json) AS e(event_id uuid, event_time timestamptz, agent_type text,
          mcp_name text, tool text, event_type text, result text, deny_code text, deny_reason text, error_message text,
          rule_applied text, model text, session_id text, group_name text, actor_email text, tokens_in int,
          tokens_out int, duration_ms int, skills jsonb, prompt text, prompt_truncated boolean, metadata jsonb)
        WHERE ${guard}
        ON CONFLICT (device_id, event_id) DO NOTHING
        RETURNING event_time, agent_type, mcp_name, tool, event_type, result, deny_code, rule_applied, model,
          actor_email, group_name, tokens_in, tokens_out, duration_ms),
      roll AS (${rollupUpsertSql(sql`ins`)}),
      series AS (${seriesUpsertSql(sql`ins`)}),
      dev AS (
        UPDATE devices SET last_seen_at = ${tsParam(now)},
          last_event_at = greatest(coalesce(last_event_at, ${latest}::timestamptz), ${latest}::timestamptz)
        WHERE id = ${uuidParam(device.deviceId)} AND ${guard} RETURNING 1)
      SELECT (SELECT count(*) FROM sig)::int AS ok, (SELECT count(*) FROM ins)::int AS inserted`,
  );
  if (Number(row?.ok) !== 1) throw replayedRequest();
  const accepted = Number(row?.inserted ?? 0);
  return {
    deviceId: device.deviceId,
    accepted,
    duplicates: events.length - accepted,
    receivedAt: now.toISOString(),
  };
}
