// Fleet alerts (docs/policy.md, "Alerts"): one row per (kind, subject) with the devices it covers, so that one change
// across the fleet is one alert with a device count. The derivations (shared/alerts/derive.ts) raise them through
// raiseAlerts; admins list, read and acknowledge them (audited alert.acknowledged); each new alert is queued for
// every configured webhook and the EventBridge bus in the transaction that opens it (shared/alerts/webhooks.ts delivers).
import { type SQL, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { jsonParam, tsParam, uuidParam } from '../core/db/sql-values.ts';
import { conflict, notFound } from '../core/errors.ts';
import {
  cursorKey,
  decodeCursor,
  encodeCursor,
  filterHash,
  iso,
  isoUs,
  TS_RE,
  UUID_RE,
} from '../observability/cursor.ts';
import { EVENTBRIDGE_DESTINATION } from './events.ts';
import {
  type AcknowledgeAlertBody,
  ALERT_DEVICES_SHOWN,
  type AlertKind,
  type AlertView,
  type ListAlertsQuery,
  type ListDeliveriesQuery,
} from './schemas.ts';

/** One alert a derivation found, with the devices it found it on (SQL selecting device_id, or ids). */
export interface AlertHit {
  kind: AlertKind;
  subject: string;
  details: Record<string, unknown>;
}

/**
 * The assignments that record a change of alert `a` when `changed` holds: this transaction as its last change and one
 * more revision, unless this transaction already changed it (opened it, or changed it before).
 */
const changedIf = (changed: SQL): SQL => {
  const now = sql`${changed} AND a.change_xid <> pg_current_xact_id()`;
  return sql`change_xid = CASE WHEN ${now} THEN pg_current_xact_id() ELSE a.change_xid END,
    revision = a.revision + CASE WHEN ${now} THEN 1 ELSE 0 END`;
};

/** The event a new alert is delivered as (webhooks, EventBridge). */
export const ALERT_OPENED = 'alert.opened';

/**
 * Opens the alerts of `hits` that do not exist yet and touches the others (last_seen_at, details), then adds the
 * devices `devices` selects (columns kind, subject, device_id) to them. New alerts are queued for every webhook of
 * `config`. Returns the ids of the alerts it opened. Runs in the caller's transaction.
 *
 * An alert found again changes when its details differ or devices join it: it takes the transaction as its last
 * change (change_xid) and one more revision, once per transaction, so the Detection Finding export sends it again.
 * Found again with nothing new, only last_seen_at moves: every report of a server from a device its alert already
 * holds finds the alert again, and sending it each time would repeat the same finding to a SIEM.
 */
export async function raiseAlerts(
  tx: Db,
  config: Pick<Config, 'alerts'>,
  hits: readonly AlertHit[],
  devices: SQL | null,
  now: Date,
): Promise<string[]> {
  if (hits.length === 0) return [];
  const at = tsParam(now);
  const rows = await queryRows(
    tx,
    sql`INSERT INTO alerts AS a (kind, subject, details, first_seen_at, last_seen_at)
      SELECT h.kind, h.subject, h.details, ${at}, ${at}
      FROM jsonb_to_recordset(${jsonParam(hits)}) AS h(kind text, subject text, details jsonb)
      ORDER BY h.kind, h.subject
      ON CONFLICT (kind, subject) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, details = EXCLUDED.details,
        ${changedIf(sql`a.details IS DISTINCT FROM EXCLUDED.details`)}
      RETURNING a.id::text AS id, (a.xmax = 0) AS created`,
    { id: col.text, created: col.bool },
  );
  if (devices) {
    await tx.execute(sql`WITH added AS (INSERT INTO alert_devices (alert_id, device_id, first_seen_at)
        SELECT DISTINCT a.id, d.device_id, ${at} FROM (${devices}) d
        JOIN alerts a ON a.kind = d.kind AND a.subject = d.subject
        ON CONFLICT (alert_id, device_id) DO NOTHING
        RETURNING alert_id)
      UPDATE alerts a SET ${changedIf(sql`true`)} WHERE a.id IN (SELECT alert_id FROM added)`);
  }
  const opened = rows.filter((r) => r.created === true || String(r.created) === 'true').map((r) => r.id);
  const destinations = [
    ...config.alerts.webhooks.map((w) => w.name),
    ...(config.alerts.eventbridge.bus ? [EVENTBRIDGE_DESTINATION] : []),
  ];
  if (opened.length && destinations.length) {
    await tx.execute(sql`INSERT INTO alert_deliveries (alert_id, destination, event, next_attempt_at)
      SELECT a::uuid, w, ${ALERT_OPENED}, ${at}
      FROM jsonb_array_elements_text(${jsonParam(opened)}) a CROSS JOIN jsonb_array_elements_text(${jsonParam(destinations)}) w`);
  }
  return opened;
}

/** The columns of an alert as the API gives it (a JSON object per row), from alias `t`. */
export const alertJson = sql`json_build_object('id', t.id::text, 'kind', t.kind, 'subject', t.subject, 'status', t.status,
  'details', t.details, 'device_count', (SELECT count(*) FROM alert_devices ad WHERE ad.alert_id = t.id)::int,
  'first_seen_at', ${iso(sql`t.first_seen_at`)}, 'last_seen_at', ${iso(sql`t.last_seen_at`)},
  'acknowledged_at', ${iso(sql`t.acknowledged_at`)}, 'acknowledged_by', t.acknowledged_by,
  'acknowledge_note', t.acknowledge_note)`;

/**
 * One page of a list newest first, keyset-paginated on (`at`, id) of table alias `t`: `json` is each row's object
 * (with its `id`), `where` the filters; the cursor is bound to the list's name and filters.
 */
async function keysetPage<T extends { id: string }>(
  db: Db,
  config: Pick<Config, 'auth'>,
  page: {
    list: string;
    query: { limit: number; cursor?: string | undefined };
    filters: Record<string, unknown>;
  },
  from: SQL,
  at: string,
  json: SQL,
  where: SQL[],
): Promise<{ items: T[]; next_cursor: string | null; limit: number }> {
  const { list, query } = page;
  const fh = filterHash(page.filters);
  const key = sql.raw(`t.${at}`);
  if (query.cursor) {
    const [pos, id] = decodeCursor(cursorKey(config), query.cursor, list, fh, [TS_RE, UUID_RE]);
    where.push(sql`(${key}, t.id) < (${pos}::timestamptz, ${id}::uuid)`);
  }
  const rows = await queryRows(
    db,
    sql`SELECT ${json}::text AS o, ${isoUs(key)} AS k FROM ${from} t
      WHERE ${sql.join([sql`true`, ...where], sql` AND `)} ORDER BY ${key} DESC, t.id DESC LIMIT ${query.limit + 1}`,
    { o: col.json<T>(), k: col.text },
  );
  const items = rows.slice(0, query.limit).map((r) => ({ view: r.o, k: r.k }));
  const last = items.at(-1);
  return {
    items: items.map((i) => i.view),
    next_cursor:
      rows.length > query.limit && last
        ? encodeCursor(cursorKey(config), list, [last.k, last.view.id], fh)
        : null,
    limit: query.limit,
  };
}

/** GET /v1/admin/alerts: newest first, keyset-paginated on (first_seen_at, id). */
export async function listAlerts(db: Db, config: Pick<Config, 'auth'>, query: ListAlertsQuery) {
  const where: SQL[] = [];
  if (query.kind) where.push(sql`t.kind = ${query.kind}`);
  if (query.status) where.push(sql`t.status = ${query.status}`);
  const { items, ...page } = await keysetPage<AlertView>(
    db,
    config,
    { list: 'alerts', query, filters: query },
    sql`alerts`,
    'first_seen_at',
    alertJson,
    where,
  );
  return { alerts: items, ...page };
}

async function alertById(db: Db, id: string, lock = false): Promise<AlertView> {
  const [row] = await queryRows(
    db,
    sql`SELECT ${alertJson}::text AS o FROM alerts t WHERE t.id = ${uuidParam(id)}${lock ? sql` FOR UPDATE` : sql``}`,
    { o: col.json<AlertView>() },
  );
  if (!row) throw notFound(`No alert ${id}.`);
  return row.o;
}

/** GET /v1/admin/alerts/{id}: the alert and the first devices it counted. */
export async function getAlert(db: Db, id: string) {
  const alert = await alertById(db, id);
  const devices = await queryRows(
    db,
    sql`SELECT d.id::text AS device_id, d.serial_number, d.owner_email, ${iso(sql`ad.first_seen_at`)} AS first_seen_at
      FROM alert_devices ad JOIN devices d ON d.id = ad.device_id WHERE ad.alert_id = ${uuidParam(id)}
      ORDER BY ad.first_seen_at, d.id LIMIT ${ALERT_DEVICES_SHOWN}`,
    { device_id: col.text, serial_number: col.text, owner_email: col.text, first_seen_at: col.text },
  );
  return { ...alert, devices };
}

/** POST /v1/admin/alerts/{id}/acknowledge: open → acknowledged, with who and why, audited in the same transaction. */
export async function acknowledgeAlert(db: Db, id: string, body: AcknowledgeAlertBody, actor: AuditActor) {
  return db.transaction(async (tx) => {
    const alert = await alertById(tx, id, true);
    if (alert.status !== 'open')
      throw conflict(
        'alert_acknowledged',
        `Alert ${id} was acknowledged by ${alert.acknowledged_by} at ${alert.acknowledged_at}.`,
      );
    await tx.execute(sql`UPDATE alerts SET status = 'acknowledged', acknowledged_at = now(),
      acknowledged_by = ${actor.email}, acknowledge_note = ${body.note ?? null}::text,
      change_xid = pg_current_xact_id(), revision = revision + 1 WHERE id = ${uuidParam(id)}`);
    await recordAudit(tx, {
      actionType: 'alert.acknowledged',
      actor,
      resourceType: 'alert',
      resourceId: id,
      metadata: {
        kind: alert.kind,
        subject: alert.subject,
        device_count: alert.device_count,
        ...(body.note === undefined ? {} : { note: body.note }),
      },
    });
    return alertById(tx, id);
  });
}

/** GET /v1/admin/alerts/deliveries: webhook deliveries of one status (default dead: the dead-letter list). */
export async function listDeliveries(db: Db, config: Pick<Config, 'auth'>, query: ListDeliveriesQuery) {
  const { items, ...page } = await keysetPage<{ id: string }>(
    db,
    config,
    { list: 'deliveries', query, filters: query },
    sql`alert_deliveries`,
    'created_at',
    sql`json_build_object('id', t.id::text, 'alert_id', t.alert_id::text, 'destination', t.destination,
      'event', t.event, 'status', t.status, 'attempts', t.attempts,
      'next_attempt_at', ${iso(sql`t.next_attempt_at`)}, 'last_error', t.last_error,
      'created_at', ${iso(sql`t.created_at`)}, 'finished_at', ${iso(sql`t.finished_at`)})`,
    [sql`t.status = ${query.status}`],
  );
  return { deliveries: items, ...page };
}
