import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { auditInsertSql } from '../audit/audit.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { Db } from '../core/db/database.ts';
import { sqlState } from '../core/db/errors.ts';
import { col, queryRows, type RowOf } from '../core/db/query.ts';
import { textParam, tsParam, uuidParam } from '../core/db/sql-values.ts';
import { conflict, forbidden, unauthenticated } from '../core/errors.ts';
import type { VerifiedDeviceRequest } from './enrollment.ts';
import { replayedRequest } from './enrollment.ts';

export interface RegisterInput {
  serialNumber: string;
  brand: string;
  model: string;
}

export interface RegisterOptions {
  /**
   * Whether a new device (a certificate not enrolled yet: a first registration or a rotation) may register. It may
   * only while CLI sign-in is mounted, i.e. the service has a dashboard URL (device-protocol.md, last section);
   * an enrolled certificate registering again is always answered.
   */
  enrollmentOpen: boolean;
}

export const enrollmentDisabled = () =>
  forbidden(
    'New devices cannot register: CLI sign-in is disabled because the service has no dashboard URL. Set ' +
      '--dashboard-url / SVC_DASHBOARD_URL (dashboard_url in the config file); enrolled devices keep reporting.',
    'enrollment_disabled',
  );

export interface RegisterResult {
  created: boolean;
  deviceId: string;
  certificateFingerprint: string;
}

interface Existing {
  id: string;
  fingerprint: string;
  serial_number: string;
  brand: string;
  owner_subject: string;
  owner_email: string;
  /** An admin released it: the next registration, by anyone, takes it. */
  released: boolean;
}

/** Whether a certificate was replaced, with a device it or the hardware matches (a LEFT JOIN: NULLs for none). */
const MATCH_ROW = {
  replaced: col.bool,
  id: col.nullable(col.text),
  fingerprint: col.nullable(col.text),
  serial_number: col.nullable(col.text),
  brand: col.nullable(col.text),
  owner_subject: col.nullable(col.text),
  owner_email: col.nullable(col.text),
  released: col.nullable(col.bool),
};

/** 409: the device is someone else's, and no admin released it. Names the device, not its owner. */
export const deviceOwnedByAnotherUser = (device: Pick<Existing, 'id' | 'serial_number' | 'brand'>) =>
  conflict(
    'device_owned_by_another_user',
    `Device ${device.serial_number} (${device.brand}, deviceId ${device.id}) is registered to another user. An admin ` +
      `must release it (POST /v1/admin/devices/${device.id}/release) before anyone else can enroll it.`,
  );

/**
 * The replay record of a request (its signature hash, certificate fingerprint, and until when it is kept) as values
 * or, inside a SQL function, as the function's arguments; the rest of a write only happens when it was inserted.
 * With `when`, it is only written when that condition holds (a request that fails stores nothing).
 */
export const signatureInsertSql = (hash: SQL, fingerprint: SQL, until: SQL, when?: SQL) =>
  sql`INSERT INTO device_signatures (signature_hash, fingerprint, expires_at)
      ${when ? sql`SELECT ${hash}, ${fingerprint}, ${until} WHERE ${when}` : sql`VALUES (${hash}, ${fingerprint}, ${until})`}
      ON CONFLICT DO NOTHING RETURNING 1`;

/** The replay record of this request (only when `when` holds, if given). */
export const signatureInsert = (device: VerifiedDeviceRequest, when?: SQL) =>
  signatureInsertSql(
    sql`${device.signatureHash}`,
    sql`${device.fingerprint}`,
    tsParam(device.replayUntil),
    when,
  );

/** A registration whose device row changed between its read and its write: read again and decide again. */
class DeviceChanged extends Error {}

/**
 * POST /v1/devices/register (device-protocol.md): the owner is the token's subject, and a registered device stays
 * with its owner. A new certificate creates the device (201); the same certificate again returns the same device
 * (200); a known serialNumber + brand with a new certificate rotates its key (200, audited `device.key_rotated`; the
 * old certificate stops working at once). Either one by another user than the owner is 409
 * device_owned_by_another_user and stores nothing, unless an admin released the device: then the caller becomes its
 * owner, audited `device.re_enrolled` with the old and the new owner. Without a dashboard URL
 * (`options.enrollmentOpen` false) only the same certificate again is accepted: a new device and a rotation are 403
 * enrollment_disabled, and nothing is written.
 * Two database calls: one lookup, then one statement that does the whole write (replay record included), so the
 * write is atomic on every driver without a transaction's extra round trips on the Data API. That statement locks
 * the device row as the lookup saw it; if it has changed since (released, re-enrolled, rotated), the lookup runs
 * again.
 */
export async function registerDevice(
  db: Db,
  input: RegisterInput,
  device: VerifiedDeviceRequest,
  owner: Principal,
  sourceIp: string,
  options: RegisterOptions,
): Promise<RegisterResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await registerOnce(db, input, device, owner, sourceIp, options);
    } catch (err) {
      // Two first registrations of one device raced, or the device changed under this one: the next pass reads
      // the row as it is now.
      const raced = sqlState(err) === '23505' || err instanceof DeviceChanged;
      if (raced && attempt < 2) continue;
      throw err;
    }
  }
}

async function registerOnce(
  db: Db,
  input: RegisterInput,
  device: VerifiedDeviceRequest,
  owner: Principal,
  sourceIp: string,
  options: RegisterOptions,
): Promise<RegisterResult> {
  // One row at least: whether the certificate was replaced (by any device), with the devices it or the hardware
  // matches (none: NULLs).
  const rows = await queryRows(
    db,
    sql`SELECT r.replaced, d.id::text AS id, d.certificate_fingerprint AS fingerprint, d.serial_number, d.brand,
          d.owner_subject, d.owner_email, d.released_at IS NOT NULL AS released
        FROM (SELECT EXISTS (SELECT 1 FROM device_certificates c
                WHERE c.fingerprint = ${device.fingerprint} AND c.replaced_at IS NOT NULL) AS replaced) AS r
        LEFT JOIN devices d ON d.certificate_fingerprint = ${device.fingerprint}
           OR (d.serial_number = ${input.serialNumber} AND d.brand = ${input.brand})`,
    MATCH_ROW,
  );
  const replaced = rows.some((d) => d.replaced);
  const found = rows.filter((d): d is RowOf<typeof MATCH_ROW> & Existing => d.id !== null);
  const sameCert = found.find((d) => d.fingerprint === device.fingerprint);
  const sameHardware = found.find((d) => d.serial_number === input.serialNumber && d.brand === input.brand);
  // A retired certificate never comes back: not for its device, and not under other hardware either.
  if (!sameCert && replaced) {
    throw unauthenticated(
      'This certificate was replaced by a newer one and cannot be used again.',
      'invalid_certificate',
    );
  }
  const existing = sameCert ?? sameHardware;
  if (existing && existing.owner_subject !== owner.subject && !existing.released) {
    throw deviceOwnedByAnotherUser(existing);
  }
  if (!sameCert && !options.enrollmentOpen) throw enrollmentDisabled();
  const now = new Date();
  const actor = { id: owner.subject, email: owner.email, ipAddress: sourceIp };

  if (!existing) return createDevice(db, input, device, owner, actor, now);

  // The row as read: its certificate, and still the caller's or released. Locked by the statement, so that a release,
  // a re-enrollment or a rotation in between is seen (and this registration decided again), not overwritten.
  const lock = sql`SELECT id FROM devices WHERE id = ${uuidParam(existing.id)}
      AND certificate_fingerprint = ${existing.fingerprint}
      AND (owner_subject = ${owner.subject} OR released_at IS NOT NULL) FOR UPDATE`;
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  const rotate = !sameCert;
  // Audited: a re-enrollment after a release (whoever it is by), a rotation of the key by its owner.
  const audit = existing.released
    ? auditInsertSql(
        {
          actionType: 'device.re_enrolled',
          actor,
          resourceType: 'device',
          resourceId: existing.id,
          metadata: {
            serial_number: existing.serial_number,
            brand: existing.brand,
            from_owner: existing.owner_subject,
            from_owner_email: existing.owner_email,
            to_owner: owner.subject,
            to_owner_email: owner.email,
            from_fingerprint: existing.fingerprint,
            to_fingerprint: device.fingerprint,
          },
        },
        guard,
      )
    : rotate
      ? auditInsertSql(
          {
            actionType: 'device.key_rotated',
            actor,
            resourceType: 'device',
            resourceId: existing.id,
            metadata: {
              from: existing.fingerprint,
              to: device.fingerprint,
              serial_number: input.serialNumber,
            },
          },
          guard,
        )
      : undefined;
  const certificate = rotate
    ? sql`retired AS (UPDATE device_certificates SET replaced_at = ${tsParam(now)}
                  WHERE device_id = ${uuidParam(existing.id)} AND replaced_at IS NULL AND ${guard} RETURNING 1),
      cert AS (INSERT INTO device_certificates (fingerprint, device_id, certificate_pem, not_before, not_after, created_at)
               SELECT ${device.fingerprint}, ${uuidParam(existing.id)}, ${device.certificatePem},
                      ${tsParam(device.notBefore)}, ${tsParam(device.notAfter)}, ${tsParam(now)} WHERE ${guard} RETURNING 1),`
    : sql``;
  const newKey = rotate
    ? sql`certificate_fingerprint = ${device.fingerprint}, certificate_pem = ${device.certificatePem},
                key_type = ${device.keyType}, cert_not_before = ${tsParam(device.notBefore)},
                cert_not_after = ${tsParam(device.notAfter)},`
    : sql``;
  const statement = sql`WITH lock AS (${lock}),
      sig AS (${signatureInsert(device, sql`EXISTS (SELECT 1 FROM lock)`)}),
      ${certificate}
      upd AS (UPDATE devices SET ${newKey} owner_subject = ${owner.subject}, owner_email = ${owner.email},
                model = ${input.model}, released_at = NULL, last_seen_at = ${tsParam(now)},
                updated_at = ${tsParam(now)}, stats_dirty = true
              WHERE id = ${uuidParam(existing.id)} AND ${guard} RETURNING 1)
      ${audit ? sql`, audit AS (${audit} RETURNING 1)` : sql``}
      SELECT (SELECT count(*) FROM lock)::int AS matched, (SELECT count(*) FROM sig)::int AS ok`;
  const [row] = await queryRows(db, statement, { matched: col.number, ok: col.number });
  if (Number(row?.matched) !== 1) throw new DeviceChanged();
  if (Number(row?.ok) !== 1) throw replayedRequest();
  return { created: false, deviceId: existing.id, certificateFingerprint: device.fingerprint };
}

/** A first registration: the device, its certificate and `device.registered`, with the replay record. */
async function createDevice(
  db: Db,
  input: RegisterInput,
  device: VerifiedDeviceRequest,
  owner: Principal,
  actor: { id: string; email: string; ipAddress: string },
  now: Date,
): Promise<RegisterResult> {
  const id = randomUUID();
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  const statement = sql`WITH sig AS (${signatureInsert(device)}),
      dev AS (INSERT INTO devices (id, serial_number, brand, model, owner_subject, owner_email, certificate_fingerprint,
                certificate_pem, key_type, cert_not_before, cert_not_after, last_seen_at, created_at, updated_at)
              SELECT ${uuidParam(id)}, ${input.serialNumber}, ${input.brand}, ${input.model}, ${owner.subject},
                ${textParam(owner.email)}, ${device.fingerprint}, ${device.certificatePem}, ${device.keyType},
                ${tsParam(device.notBefore)}, ${tsParam(device.notAfter)}, ${tsParam(now)}, ${tsParam(now)}, ${tsParam(now)}
              WHERE ${guard} RETURNING id),
      cert AS (INSERT INTO device_certificates (fingerprint, device_id, certificate_pem, not_before, not_after, created_at)
               SELECT ${device.fingerprint}, id, ${device.certificatePem}, ${tsParam(device.notBefore)},
                      ${tsParam(device.notAfter)}, ${tsParam(now)} FROM dev RETURNING 1),
      audit AS (${auditInsertSql(
        {
          actionType: 'device.registered',
          actor,
          resourceType: 'device',
          resourceId: id,
          metadata: {
            serial_number: input.serialNumber,
            brand: input.brand,
            model: input.model,
            fingerprint: device.fingerprint,
          },
        },
        guard,
      )} RETURNING 1)
      SELECT (SELECT count(*) FROM sig)::int AS ok`;
  const [row] = await queryRows(db, statement, { ok: col.number });
  if (Number(row?.ok) !== 1) throw replayedRequest();
  return { created: true, deviceId: id, certificateFingerprint: device.fingerprint };
}
