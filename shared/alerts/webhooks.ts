// Delivery of alerts as webhooks and EventBridge events (docs/policy.md, "Webhooks"): each delivery is a row of alert_deliveries, so retries
// survive a restart. A pass claims the due rows (moving next_attempt_at past the request's timeout, so that a second
// pass does not send them too), posts each one signed, and records the outcome: delivered; or another attempt after
// alerts.delivery.backoff doubled per failure (at most max_backoff); or dead after max_attempts (the dead-letter list).
import { createHmac } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { exponentialBound } from '../core/backoff.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { tsParam, uuidParam } from '../core/db/sql-values.ts';
import { EVENTBRIDGE_DESTINATION, putAlertEvent } from './events.ts';
import type { AlertView } from './schemas.ts';

export const SIGNATURE_HEADER = 'x-acp-signature';
export const TIMESTAMP_HEADER = 'x-acp-timestamp';
export const DELIVERY_HEADER = 'x-acp-delivery';
const CLAIM_ROWS = 50;

/** `v1=` and the hex HMAC-SHA256 of `<timestamp>.<body>` under the webhook secret. */
export const webhookSignature = (secret: string, timestamp: string, body: string): string =>
  `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;

const summary = (alert: AlertView): string =>
  `${alert.kind.replaceAll('_', ' ')}: ${alert.subject} (${alert.device_count} device${alert.device_count === 1 ? '' : 's'})`;

/** The body posted for an alert: the alert itself, or a Slack-compatible message ({text, blocks}). */
export function webhookBody(event: string, alert: AlertView, format: 'json' | 'slack'): string {
  if (format === 'json') return JSON.stringify({ event, alert });
  const text = `Alert — ${summary(alert)}`;
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${summary(alert)}*` } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `${alert.id} · first seen ${alert.first_seen_at}` }],
      },
    ],
  });
}

const CLAIMED = {
  id: col.text,
  destination: col.text,
  event: col.text,
  attempts: col.number,
  alert: col.text,
};

/** Delivers the due webhooks and EventBridge events; returns how many were delivered, retried later and dead. */
export async function deliverAlerts(db: Db, config: Pick<Config, 'alerts'>, now = new Date()) {
  const { delivery, webhooks, webhook_secret: secret } = config.alerts;
  const result = { delivered: 0, retried: 0, dead: 0 };
  const claimed = await queryRows(
    db,
    sql`UPDATE alert_deliveries d SET next_attempt_at = ${tsParam(new Date(now.getTime() + 2 * delivery.timeout))}
      FROM alerts t
      WHERE t.id = d.alert_id AND d.id IN (SELECT id FROM alert_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${tsParam(now)}
        ORDER BY next_attempt_at LIMIT ${CLAIM_ROWS} FOR UPDATE SKIP LOCKED)
      RETURNING d.id::text AS id, d.destination, d.event, d.attempts,
        json_build_object('id', t.id::text, 'kind', t.kind, 'subject', t.subject, 'status', t.status,
          'details', t.details, 'device_count', (SELECT count(*) FROM alert_devices ad WHERE ad.alert_id = t.id)::int,
          'first_seen_at', to_char(t.first_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text AS alert`,
    CLAIMED,
  );
  for (const row of claimed) {
    const hook = webhooks.find((w) => w.name === row.destination);
    const alert = JSON.parse(row.alert) as AlertView;
    const bus = row.destination === EVENTBRIDGE_DESTINATION && config.alerts.eventbridge.bus !== '';
    let error: string | null = null;
    if (bus) error = await putAlertEvent(config.alerts.eventbridge, row.event, alert);
    else if (!hook) error = 'destination no longer configured';
    else {
      const body = webhookBody(row.event, alert, hook.format);
      const timestamp = String(Math.floor(Date.now() / 1000));
      try {
        const res = await fetch(hook.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [SIGNATURE_HEADER]: webhookSignature(secret, timestamp, body),
            [TIMESTAMP_HEADER]: timestamp,
            [DELIVERY_HEADER]: row.id,
          },
          body,
          signal: AbortSignal.timeout(delivery.timeout),
        });
        await res.body?.cancel();
        if (!res.ok) error = `HTTP ${res.status}`;
      } catch (err) {
        error = (err as Error).name === 'TimeoutError' ? 'timed out' : 'network error';
      }
    }
    const attempts = Number(row.attempts) + 1;
    const id = uuidParam(row.id);
    if (error === null) {
      result.delivered++;
      await db.execute(sql`UPDATE alert_deliveries SET status = 'delivered', attempts = ${attempts}::int,
        finished_at = now(), last_error = NULL WHERE id = ${id}`);
    } else if ((!hook && !bus) || attempts >= delivery.max_attempts) {
      result.dead++;
      await db.execute(sql`UPDATE alert_deliveries SET status = 'dead', attempts = ${attempts}::int,
        finished_at = now(), last_error = ${error} WHERE id = ${id}`);
    } else {
      result.retried++;
      const wait = exponentialBound(attempts, delivery.backoff, delivery.max_backoff);
      await db.execute(sql`UPDATE alert_deliveries SET attempts = ${attempts}::int, last_error = ${error},
        next_attempt_at = ${tsParam(new Date(Date.now() + wait))} WHERE id = ${id}`);
    }
  }
  return result;
}
