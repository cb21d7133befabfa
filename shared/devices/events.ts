import { type SQL, sql } from 'drizzle-orm';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { textParam, tsParam } from '../core/db/sql-values.ts';
import { fieldName, invalid, type ServiceError, tooLarge } from '../core/errors.ts';
import { DAY, oldestAcceptedEventTime } from '../observability/retention.ts';
import { signatureInsertSql } from './devices.ts';
import {
  assertEnrolled,
  enrolledDeviceSql,
  replayedRequest,
  unknownDevice,
  type VerifiedDeviceRequest,
} from './enrollment.ts';
import { EVENT_TEXT_MAX, type ObservabilityEventInput } from './schemas.ts';

/** Truncates a text to `max` characters (code points, so no surrogate pair is cut in half). */
export function truncateText(
  text: string | undefined,
  max: number,
): { text: string | undefined; truncated: boolean } {
  // Code points never outnumber UTF-16 code units: a text this short needs no counting.
  if (text === undefined || text.length <= max) return { text, truncated: false };
  const chars = Array.from(text);
  return chars.length > max
    ? { text: chars.slice(0, max).join(''), truncated: true }
    : { text, truncated: false };
}

/** 1..events.max_batch events per batch: more is 413 batch_too_large (the 1 MiB bound is the route's maxBody). */
export function checkBatchSize(config: Config, events: readonly unknown[]): void {
  if (events.length > config.events.max_batch) {
    throw tooLarge(
      'batch_too_large',
      `A batch holds at most ${config.events.max_batch} events; this one has ${events.length}. Split it.`,
    );
  }
}

/**
 * 400 event_too_old when an event is older than the retention window (oldestAcceptedEventTime): its day is dropped, or
 * about to be, so it could be neither kept nor archived. The message names the first such event's field and says where
 * the window starts (`which starts at <instant>`), which the reference agent reads to drop every older event of its
 * batch at once (agent/daemon/daemon.ts); the rest of the batch is sent again without them.
 */
export function checkEventAge(
  config: Config,
  events: readonly Pick<ObservabilityEventInput, 'event_time'>[],
  now: Date,
): ServiceError | undefined {
  const start = oldestAcceptedEventTime(config, now);
  const old = events.flatMap((e, i) => (Date.parse(e.event_time) < start.getTime() ? [i] : []));
  const first = old[0];
  if (first === undefined) return undefined;
  const days = Math.round((config.events.retention / DAY) * 100) / 100;
  return invalid(
    'event_too_old',
    `${fieldName('body', ['events', first, 'event_time'])}: ${events[first]?.event_time} is before the retention ` +
      `window, which starts at ${start.toISOString()} (events.retention: ${days} days); ${old.length} of ` +
      `${events.length} events are before it. A batch is all or nothing: drop the events before the window and send ` +
      'the rest.',
  );
}

/** Name of the SQL function that runs the ingest statement (migrations: the newest that defines it). */
export const INGEST_FUNCTION = 'ingest_events';

/**
 * CREATE OR REPLACE FUNCTION ingest_events(...): the whole batch in one set-based statement, as a PL/pgSQL function
 * so that each database session plans it once and keeps the plan (a generic one from the first call), instead of
 * parsing and planning ~10 kB of SQL on every request — most of the cost of a small batch, and the same on every
 * driver, the Data API included (it has no prepared statements).
 *
 * The statement: the enrolled device of the certificate (`d`; none, and nothing is written), the replay record,
 * every event (expanded from one json value by json_to_recordset, never one parameter per value; json, not jsonb:
 * the text is read once instead of being converted first, measurably faster for large batches), and the device's
 * last-seen times. All or nothing. An event whose (event_id, event_time) is already stored for the device is counted
 * as a duplicate, not stored again: the table is partitioned by event_time, so its unique key holds it (migration
 * 0009_events_partitioned.sql); a retry resends the event's own time, so it meets its first copy on any day. Each event is stamped with the transaction that stored it (ingest_xid): the rollups and series are not
 * written here but folded from the events of finished transactions (observability_fold(), shared/observability/rollups/rollups.ts),
 * before every read of them and on a schedule. It returns the device, whether the replay record was new, and how
 * many events were stored.
 *
 * The migration that installs it is generated from this text (`npm run db:functions -- <name>`), and a unit test
 * fails while the newest such migration differs from it (scripts/function-migrations.ts).
 */
export function ingestFunctionSql(): SQL {
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  const statement = sql`WITH d AS (${enrolledDeviceSql(sql`p_fingerprint`)}),
      sig AS (${signatureInsertSql(sql`p_signature_hash`, sql`p_fingerprint`, sql`p_replay_until`, sql`EXISTS (SELECT 1 FROM d)`)}),
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
        WHERE ${guard}
        ON CONFLICT (device_id, event_id, event_time) DO NOTHING
        RETURNING 1),
      dev AS (
        UPDATE devices SET last_seen_at = p_received_at,
          last_event_at = greatest(coalesce(last_event_at, p_latest), p_latest), stats_dirty = true
        WHERE id = (SELECT id FROM d) AND ${guard} RETURNING 1)
      SELECT (SELECT id FROM d), ${guard}, (SELECT count(*) FROM ins)::int`;
  return sql`CREATE OR REPLACE FUNCTION ${sql.raw(INGEST_FUNCTION)}(p_fingerprint text, p_source_ip text,
  p_received_at timestamptz, p_latest timestamptz, p_signature_hash text, p_replay_until timestamptz, p_events json,
  OUT device uuid, OUT signature_ok boolean, OUT inserted integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $ingest$
BEGIN
  ${statement}
    INTO device, signature_ok, inserted;
END
$ingest$`;
}

/**
 * POST /v1/devices/events: the whole batch through ingest_events (above), one call: it also finds the device
 * (401 unknown_device when the certificate is not enrolled) and refuses a replayed signature (401). The prompt is
 * truncated here (events.prompt_max_chars, in code points, and marked), and so are deny_reason and error_message
 * (EVENT_TEXT_MAX): a long stack trace must not cost the batch it travels in. Absent optional fields stay
 * undefined, so JSON.stringify leaves them out and json_to_recordset reads NULL.
 */
export async function ingestEvents(
  db: Db,
  config: Config,
  device: VerifiedDeviceRequest,
  events: readonly ObservabilityEventInput[],
  sourceIp: string,
) {
  checkBatchSize(config, events);
  const now = new Date();
  const tooOld = checkEventAge(config, events, now);
  if (tooOld) {
    // A certificate no device has learns nothing about its body: 401 unknown_device first.
    await assertEnrolled(db, device.fingerprint);
    throw tooOld;
  }
  const rows = events.map((e) => {
    const { text: prompt, truncated } = truncateText(e.prompt, config.events.prompt_max_chars);
    return {
      event_id: e.event_id,
      event_time: e.event_time,
      agent_type: e.agent_type,
      mcp_name: e.mcp_name,
      tool: e.tool,
      event_type: e.event_type,
      result: e.result,
      deny_code: e.deny_code,
      deny_reason: truncateText(e.deny_reason, EVENT_TEXT_MAX.deny_reason).text,
      error_message: truncateText(e.error_message, EVENT_TEXT_MAX.error_message).text,
      rule_applied: e.rule_applied,
      model: e.model,
      session_id: e.session_id,
      group_name: e.group,
      actor_email: e.actor_email,
      tokens_in: e.tokens_in,
      tokens_out: e.tokens_out,
      duration_ms: e.duration_ms,
      skills: e.skills,
      prompt: prompt ?? null,
      prompt_truncated: truncated,
      metadata: e.metadata,
    };
  });
  // By instant, not by text: event times may carry different offsets.
  let latestMs = Number.NEGATIVE_INFINITY;
  for (const r of rows) latestMs = Math.max(latestMs, Date.parse(r.event_time));
  const [row] = await queryRows(
    db,
    sql`SELECT device::text AS device_id, signature_ok, inserted FROM ${sql.raw(INGEST_FUNCTION)}(
      ${textParam(device.fingerprint)}, ${textParam(sourceIp || null)}, ${tsParam(now)}, ${tsParam(new Date(latestMs))},
      ${textParam(device.signatureHash)}, ${tsParam(device.replayUntil)}, ${JSON.stringify(rows)}::json)`,
    { device_id: col.nullable(col.text), signature_ok: col.bool, inserted: col.number },
  );
  if (!row?.device_id) throw unknownDevice();
  if (row.signature_ok !== true) throw replayedRequest();
  const accepted = Number(row.inserted);
  return {
    deviceId: row.device_id,
    accepted,
    duplicates: events.length - accepted,
    receivedAt: now.toISOString(),
  };
}
