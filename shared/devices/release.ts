// An admin releases a device from its owner (POST /v1/admin/devices/{id}/release): a registered device stays with
// the user who enrolled it, so a laptop that changes hands is released first, and its next registration, by whoever
// signs in on it, makes them the owner (shared/devices/devices.ts, audited `device.re_enrolled`). Until then nothing
// changes: the owner stays, and the device's certificate keeps working.
import { sql } from 'drizzle-orm';
import { type AuditActor, auditInsertSql } from '../audit/audit.ts';
import type { Db } from '../core/db/database.ts';
import { col, queryRows, type RowOf } from '../core/db/query.ts';
import { tsParam, uuidParam } from '../core/db/sql-values.ts';
import { notFound } from '../core/errors.ts';

export interface DeviceReleaseView {
  id: string;
  serial_number: string;
  brand: string;
  owner_email: string;
  released_at: string;
}

const ROW = {
  id: col.text,
  serial_number: col.text,
  brand: col.text,
  owner_subject: col.text,
  owner_email: col.text,
  released_at: col.nullable(col.text),
};
type Row = RowOf<typeof ROW>;

const noDevice = () => notFound('No device with this id.');

/**
 * Releases the device, audited `device.released` (who owned it), in one statement; a device released already is
 * answered as it is, and written no second record.
 */
export async function releaseDevice(db: Db, id: string, actor: AuditActor): Promise<DeviceReleaseView> {
  const read = sql`SELECT id::text AS id, serial_number, brand, owner_subject, owner_email,
      to_char(released_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS released_at
    FROM devices WHERE id = ${uuidParam(id)}`;
  const [device] = await queryRows(db, read, ROW);
  if (!device) throw noDevice();
  if (device.released_at) return view(device, device.released_at);
  const now = new Date();
  // Only the row as read is released: an owner changed in between (a re-enrollment) writes nothing, and is read again.
  const [row] = await queryRows(
    db,
    sql`WITH upd AS (UPDATE devices SET released_at = ${tsParam(now)}, updated_at = ${tsParam(now)}
          WHERE id = ${uuidParam(id)} AND released_at IS NULL AND owner_subject = ${device.owner_subject}
          RETURNING 1),
        audit AS (${auditInsertSql(
          {
            actionType: 'device.released',
            actor,
            resourceType: 'device',
            resourceId: device.id,
            metadata: {
              serial_number: device.serial_number,
              brand: device.brand,
              owner: device.owner_subject,
              owner_email: device.owner_email,
            },
          },
          sql`EXISTS (SELECT 1 FROM upd)`,
        )} RETURNING 1)
        SELECT (SELECT count(*) FROM upd)::int AS n`,
    { n: col.number },
  );
  if (Number(row?.n) === 1) return view(device, now.toISOString());
  const [again] = await queryRows(db, read, ROW);
  if (!again) throw noDevice();
  return again.released_at ? view(again, again.released_at) : releaseDevice(db, id, actor);
}

const view = (row: Row, releasedAt: string): DeviceReleaseView => ({
  id: row.id,
  serial_number: row.serial_number,
  brand: row.brand,
  owner_email: row.owner_email,
  released_at: releasedAt,
});
