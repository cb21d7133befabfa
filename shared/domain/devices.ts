import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { sqlState } from '../db/errors.ts';
import { queryRows } from '../db/query.ts';
import { textParam, tsParam, uuidParam } from '../db/sql-values.ts';
import type { VerifiedDeviceRequest } from '../device/enrollment.ts';
import { replayedRequest } from '../device/enrollment.ts';
import { forbidden, unauthenticated } from '../errors.ts';
import { auditInsertSql } from './audit.ts';

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
}

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

/**
 * POST /v1/devices/register (device-protocol.md): the owner is the token's subject. A new certificate creates the
 * device (201); the same certificate again returns the same device (200, owner set to the caller); a known
 * serialNumber + brand with a new certificate rotates it (the old one stops working at once), audited. Without a
 * dashboard URL (`options.enrollmentOpen` false) only the same certificate again is accepted: a new device and a
 * rotation are 403 enrollment_disabled, and nothing is written.
 * Two database calls: one lookup, then one statement that does the whole write (replay record included), so the
 * write is atomic on every driver without a transaction's extra round trips on the Data API.
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
      // Two first registrations of one device raced; the loser finds the winner's row on the next pass.
      if (sqlState(err) === '23505' && attempt === 0) continue;
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
  const rows = await queryRows<{ replaced: boolean } & { [K in keyof Existing]: Existing[K] | null }>(
    db,
    sql`SELECT r.replaced, d.id::text AS id, d.certificate_fingerprint AS fingerprint, d.serial_number, d.brand,
          d.owner_subject
        FROM (SELECT EXISTS (SELECT 1 FROM device_certificates c
                WHERE c.fingerprint = ${device.fingerprint} AND c.replaced_at IS NOT NULL) AS replaced) AS r
        LEFT JOIN devices d ON d.certificate_fingerprint = ${device.fingerprint}
           OR (d.serial_number = ${input.serialNumber} AND d.brand = ${input.brand})`,
  );
  const replaced = rows.some((d) => d.replaced === true);
  const found = rows.filter((d): d is { replaced: boolean } & Existing => d.id !== null);
  const sameCert = found.find((d) => d.fingerprint === device.fingerprint);
  const sameHardware = found.find((d) => d.serial_number === input.serialNumber && d.brand === input.brand);
  // A retired certificate never comes back: not for its device, and not under other hardware either.
  if (!sameCert && replaced) {
    throw unauthenticated(
      'This certificate was replaced by a newer one and cannot be used again.',
      'invalid_certificate',
    );
  }
  if (!sameCert && !options.enrollmentOpen) throw enrollmentDisabled();
  const now = new Date();
  const actor = { id: owner.subject, email: owner.email, ipAddress: sourceIp };
  const guard = sql`EXISTS (SELECT 1 FROM sig)`;
  let statement: ReturnType<typeof sql>;
  let result: RegisterResult;

  if (sameCert) {
    result = { created: false, deviceId: sameCert.id, certificateFingerprint: device.fingerprint };
    const ownerChanged = sameCert.owner_subject !== owner.subject;
    statement = sql`WITH sig AS (${signatureInsert(device)}),
      upd AS (UPDATE devices SET owner_subject = ${owner.subject}, owner_email = ${owner.email}, model = ${input.model},
                last_seen_at = ${tsParam(now)}, updated_at = ${tsParam(now)},
                stats_dirty = true
              WHERE id = ${uuidParam(sameCert.id)} AND ${guard} RETURNING 1)
      ${
        ownerChanged
          ? sql`, audit AS (${auditInsertSql(
              {
                actionType: 'device.owner_changed',
                actor,
                resourceType: 'device',
                resourceId: sameCert.id,
                metadata: {
                  from: sameCert.owner_subject,
                  to: owner.subject,
                  fingerprint: device.fingerprint,
                },
              },
              guard,
            )} RETURNING 1)`
          : sql``
      }
      SELECT (SELECT count(*) FROM sig)::int AS ok`;
  } else if (sameHardware) {
    result = { created: false, deviceId: sameHardware.id, certificateFingerprint: device.fingerprint };
    statement = sql`WITH sig AS (${signatureInsert(device)}),
      retired AS (UPDATE device_certificates SET replaced_at = ${tsParam(now)}
                  WHERE device_id = ${uuidParam(sameHardware.id)} AND replaced_at IS NULL AND ${guard} RETURNING 1),
      cert AS (INSERT INTO device_certificates (fingerprint, device_id, certificate_pem, not_before, not_after, created_at)
               SELECT ${device.fingerprint}, ${uuidParam(sameHardware.id)}, ${device.certificatePem},
                      ${tsParam(device.notBefore)}, ${tsParam(device.notAfter)}, ${tsParam(now)} WHERE ${guard} RETURNING 1),
      upd AS (UPDATE devices SET certificate_fingerprint = ${device.fingerprint}, certificate_pem = ${device.certificatePem},
                key_type = ${device.keyType}, cert_not_before = ${tsParam(device.notBefore)},
                cert_not_after = ${tsParam(device.notAfter)}, owner_subject = ${owner.subject},
                owner_email = ${owner.email}, model = ${input.model}, last_seen_at = ${tsParam(now)}, updated_at = ${tsParam(now)},
                stats_dirty = true
              WHERE id = ${uuidParam(sameHardware.id)} AND ${guard} RETURNING 1),
      audit AS (${auditInsertSql(
        {
          actionType: 'device.certificate_rotated',
          actor,
          resourceType: 'device',
          resourceId: sameHardware.id,
          metadata: {
            from: sameHardware.fingerprint,
            to: device.fingerprint,
            serial_number: input.serialNumber,
          },
        },
        guard,
      )} RETURNING 1)
      SELECT (SELECT count(*) FROM sig)::int AS ok`;
  } else {
    const id = randomUUID();
    result = { created: true, deviceId: id, certificateFingerprint: device.fingerprint };
    statement = sql`WITH sig AS (${signatureInsert(device)}),
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
  }
  const [row] = await queryRows<{ ok: number }>(db, statement);
  if (Number(row?.ok) !== 1) throw replayedRequest();
  return result;
}
