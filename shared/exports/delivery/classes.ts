// The streams of the OCSF classes other than API Activity (docs/exports.md, "What streams where"): each class is
// read from its own stored source after a per-destination cursor (export_class_cursors), mapped and sent, and the
// cursor moves past a batch only once the destination took it, as the tool calls' stream does (deliver.ts), with
// the same backoff. Each source's position cannot skip a row committed late:
// - inventories (Device and Software Inventory Info): devices by (inventory_xid, id), the transaction of the last
//   report, read once it is older than every running transaction; a report replaced before the pass read it is
//   sent as the newer one, since the device's inventory is a state, read whole;
// - proxied queries (Datastore Activity): usage events by (export_xid, id), the inserting transaction, likewise;
// - alerts (Detection Finding): by (change_xid, id), the transaction of the alert's last change (opened, found again
//   with more devices or other details, acknowledged), likewise; an alert changed again before the pass read it is
//   sent once, as it is then;
// - request grants and ends (User Access Management): the audit log by seq, which is drawn under the chain's lock
//   held to the end of the writing transaction, so seq order is commit order.
// Only the destinations that take a class get it: a security_lake that names a custom source for it.
import { and, asc, gt, inArray, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { alertJson } from '../../alerts/alerts.ts';
import type { AlertView } from '../../alerts/schemas.ts';
import { toAuditView } from '../../audit/audit.ts';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows, type RowOf } from '../../core/db/query.ts';
import { auditLogs, requests, requestUsageEvents } from '../../core/db/schema.ts';
import { intParam, uuidParam } from '../../core/db/sql-values.ts';
import { ServiceError } from '../../core/errors.ts';
import { deviceDetail } from '../../observability/device-detail.ts';
import { toRequestView, usageEventViewOf } from '../../requests/requests.ts';
import { afterXidPosition, type StreamedClass, TAKES_CLASS, XID_SOURCES } from '../class-positions.ts';
import type { DeliveryResult, OcsfEvent } from '../destinations/destination.ts';
import { senderFor } from '../destinations/registry.ts';
import {
  ACCESS_ACTIVITIES,
  toOcsfDatastoreActivity,
  toOcsfDetectionFinding,
  toOcsfDeviceInventory,
  toOcsfSoftwareInventory,
  toOcsfUserAccess,
} from '../ocsf.ts';
import type { DeviceInventorySource } from '../source.ts';
import { claimDue, dueAgain } from './claim.ts';
import type { DeliveryOptions, DestinationPass } from './deliver.ts';
import { failureAssignments } from './failure.ts';

interface ClassBatch {
  events: OcsfEvent[];
  /** The position after the rows read (the cursor once they are delivered); absent when none was read. */
  last?: string;
}

interface ClassSource {
  read(db: Db, config: Config, position: string, limit: number): Promise<ClassBatch>;
}

/** Committed before any transaction still running began. */
const settled = (xid: SQL) => sql`${xid} < pg_snapshot_xmin(pg_current_snapshot())`;

/** The devices whose last inventory report is after `position`, read whole; mapped by `map`. */
function inventorySource(map: (source: DeviceInventorySource) => OcsfEvent[]): ClassSource {
  const source = XID_SOURCES.deviceInventory;
  return {
    async read(db, config, position, limit) {
      const rows = await queryRows(
        db,
        sql`SELECT t.inventory_xid::text AS x, t.id::text AS id FROM devices t
          WHERE ${afterXidPosition(source, position)} AND ${settled(source.xid)}
          ORDER BY t.inventory_xid, t.id LIMIT ${intParam(limit)}`,
        { x: col.text, id: col.text },
      );
      const events: OcsfEvent[] = [];
      for (const row of rows) {
        // A device deleted since is left out: it has no inventory to send.
        const device = await deviceDetail(db, config, row.id).catch((err: unknown) => {
          if (err instanceof ServiceError && err.kind === 'not_found') return undefined;
          throw err;
        });
        if (device) events.push(...map(device));
      }
      const end = rows.at(-1);
      return end ? { events, last: `${end.x}:${end.id}` } : { events };
    },
  };
}

const ACCESS_ACTIONS = Object.keys(ACCESS_ACTIVITIES);

const SOURCES: Record<StreamedClass, ClassSource> = {
  deviceInventory: inventorySource((s) => [toOcsfDeviceInventory(s)]),
  softwareInventory: inventorySource(toOcsfSoftwareInventory),
  userAccess: {
    // A window of `limit` audit records of any kind, so that the cursor moves on past the records of other kinds.
    async read(db, _config, position, limit) {
      const window = await db
        .select()
        .from(auditLogs)
        .where(gt(auditLogs.seq, Number(position)))
        .orderBy(asc(auditLogs.seq))
        .limit(limit);
      const changes = window.filter((a) => ACCESS_ACTIONS.includes(a.actionType));
      const ids = [...new Set(changes.map((a) => a.resourceId))];
      const found = ids.length === 0 ? [] : await db.select().from(requests).where(inArray(requests.id, ids));
      const byId = new Map(found.map((r) => [r.id, toRequestView(r)]));
      const events: OcsfEvent[] = [];
      for (const audit of changes) {
        const request = byId.get(audit.resourceId);
        const event = request && toOcsfUserAccess({ audit: toAuditView(audit), request });
        if (event) events.push(event);
      }
      const end = window.at(-1);
      return end ? { events, last: String(end.seq) } : { events };
    },
  },
  datastoreActivity: {
    async read(db, _config, position, limit) {
      const source = XID_SOURCES.datastoreActivity;
      const u = requestUsageEvents;
      // Drizzle names the table itself: `t` is its alias in the shared position condition.
      const t = alias(u, 't');
      const rows = await db
        .select()
        .from(t)
        .where(and(afterXidPosition(source, position), settled(source.xid)))
        .orderBy(asc(t.exportXid), asc(t.id))
        .limit(limit);
      const ids = [...new Set(rows.map((r) => r.requestId))];
      const found = ids.length === 0 ? [] : await db.select().from(requests).where(inArray(requests.id, ids));
      const byId = new Map(found.map((r) => [r.id, r]));
      const events: OcsfEvent[] = [];
      for (const row of rows) {
        const request = byId.get(row.requestId);
        if (!request) continue;
        events.push(
          toOcsfDatastoreActivity({
            usage: usageEventViewOf(row),
            request: {
              id: request.id,
              environment_id: request.environmentId,
              datasource_names: request.datasourceNames,
            },
          }),
        );
      }
      const end = rows.at(-1);
      return end ? { events, last: `${end.exportXid}:${end.id}` } : { events };
    },
  },
  // Each alert at its last change, read whole in the statement that reads its position, so an acknowledgement
  // committed meanwhile is sent once, at its own position.
  detectionFinding: {
    async read(db, _config, position, limit) {
      const source = XID_SOURCES.detectionFinding;
      const rows = await queryRows(
        db,
        sql`SELECT t.change_xid::text AS x, t.id::text AS id, t.revision, ${alertJson}::text AS o FROM alerts t
          WHERE ${afterXidPosition(source, position)} AND ${settled(source.xid)}
          ORDER BY t.change_xid, t.id LIMIT ${intParam(limit)}`,
        { x: col.text, id: col.text, revision: col.number, o: col.json<AlertView>() },
      );
      const end = rows.at(-1);
      const events = rows.map((r) => toOcsfDetectionFinding(r.o, r.revision));
      return end ? { events, last: `${end.x}:${end.id}` } : { events };
    },
  },
};

const DUE = {
  id: col.text,
  kind: col.text,
  name: col.text,
  settings: col.text,
  class_key: col.text,
  position: col.text,
  attempts: col.number,
} as const;
type Due = RowOf<typeof DUE>;

const whereCursor = (row: Due) => sql`destination_id = ${uuidParam(row.id)} AND class_key = ${row.class_key}`;

async function recordClassFailure(
  db: Db,
  config: Config,
  row: Due,
  result: Extract<DeliveryResult, { ok: false }>,
  random: () => number,
): Promise<void> {
  await db.execute(sql`UPDATE export_class_cursors
    SET ${failureAssignments(config, row.attempts + 1, result, random)} WHERE ${whereCursor(row)}`);
}

async function deliverClass(
  db: Db,
  config: Config,
  row: Due,
  until: number,
  random: () => number,
): Promise<DestinationPass> {
  const key = row.class_key as StreamedClass;
  const pass: DestinationPass = { name: `${row.name} (${key})`, delivered: 0, batches: 0 };
  const sender = senderFor(row.kind, JSON.parse(row.settings), undefined, {
    timeoutMs: config.exports.timeout,
    securityLakeEndpoint: config.exports.security_lake_endpoint,
  });
  let position = row.position;
  while (Date.now() < until) {
    const batch = await SOURCES[key].read(db, config, position, config.exports.batch);
    if (batch.last === undefined) break;
    if (batch.events.length > 0) {
      const result = sender.sendOcsf
        ? await sender.sendOcsf(key, batch.events)
        : ({ ok: false, permanent: true, message: `${row.kind} does not take ${key}` } as const);
      if (!result.ok) {
        pass.error = result.message;
        await recordClassFailure(db, config, row, result, random);
        return pass;
      }
    }
    const moved = await queryRows(
      db,
      sql`UPDATE export_class_cursors SET position = ${batch.last}, attempts = 0, last_error = NULL,
        last_error_permanent = false, last_status = NULL, last_success_at = now(),
        delivered = delivered + ${intParam(batch.events.length)}
        WHERE ${whereCursor(row)} AND position = ${position} RETURNING true AS ok`,
      { ok: col.bool },
    );
    if (moved.length !== 1) return pass;
    pass.delivered += batch.events.length;
    pass.batches++;
    position = batch.last;
  }
  await dueAgain(db, 'export_class_cursors', whereCursor(row));
  return pass;
}

/**
 * The class streams' part of a delivery pass, within the same time budget (`until`): each due cursor of a class its
 * destination takes is claimed, as the tool calls' cursors are; one destination's classes in turn, destinations
 * side by side.
 */
export async function deliverClasses(
  db: Db,
  config: Config,
  until: number,
  options: DeliveryOptions = {},
): Promise<DestinationPass[]> {
  const random = options.random ?? Math.random;
  const due = await claimDue(db, config, {
    table: 'export_class_cursors',
    where: TAKES_CLASS,
    returning: sql`d.id::text AS id, d.kind, d.name, d.settings::text AS settings, c.class_key, c.position,
      c.attempts`,
    shape: DUE,
  });
  const byDestination = new Map<string, Due[]>();
  for (const row of due) byDestination.set(row.id, [...(byDestination.get(row.id) ?? []), row]);
  const passes = await Promise.all(
    [...byDestination.values()].map(async (rows) => {
      const out: DestinationPass[] = [];
      for (const row of rows) {
        out.push(
          await deliverClass(db, config, row, until, random).catch(async (err: Error) => {
            await recordClassFailure(
              db,
              config,
              row,
              { ok: false, permanent: false, message: err.message },
              random,
            );
            return { name: `${row.name} (${row.class_key})`, delivered: 0, batches: 0, error: err.message };
          }),
        );
      }
      return out;
    }),
  );
  return passes.flat();
}
