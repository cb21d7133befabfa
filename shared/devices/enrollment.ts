// Which enrolled device a verified certificate belongs to, and the refusals about it (docs/device-protocol.md): the
// writes of inventory and events find the device themselves, by the certificate's fingerprint, in their one
// statement; a request whose body is refused is looked up first, so that an unenrolled certificate is 401
// unknown_device before anything about its body is said.
import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../core/db/database.ts';
import { col, queryRows } from '../core/db/query.ts';
import { textParam } from '../core/db/sql-values.ts';
import { unauthenticated } from '../core/errors.ts';

/** The header that carries the signature of inventory and events (register carries it in the body). */
export const SIGNATURE_HEADER = 'x-device-signature';

/**
 * Where the enrolled device a certificate belongs to is found (every route but register needs one):
 * - `none`: not at all (register creates or rotates it);
 * - `in-write`: by the handler's own write, which reads the device by fingerprint in the same statement and answers
 *   401 unknown_device itself (one database call per request instead of a lookup and a write).
 */
export type Enrollment = 'none' | 'in-write';

// The device a route's context carries is the core's (every device route's context has one).
export type { VerifiedDeviceRequest } from '../core/http/context.ts';

export const unknownDevice = () =>
  unauthenticated(
    'No enrolled device has this certificate (never registered, or replaced by a newer one): register again.',
    'unknown_device',
  );

export const replayedRequest = () =>
  unauthenticated(
    'This signature was already used: sign every request anew with a fresh clientTimestamp.',
    'replayed_request',
  );

/**
 * The enrolled device a certificate fingerprint belongs to (its id and serial number; no row: none): the `d` of the
 * writes that check enrollment themselves (events, inventory), and the lookup before a refused body.
 */
export const enrolledDeviceSql = (fingerprint: SQL): SQL =>
  sql`SELECT id, serial_number FROM devices WHERE certificate_fingerprint = ${fingerprint}`;

/** Refuses a verified certificate that no enrolled device has (401 unknown_device). */
export async function assertEnrolled(db: Db, fingerprint: string): Promise<void> {
  const rows = await queryRows(db, enrolledDeviceSql(textParam(fingerprint)), { id: col.text });
  if (rows.length === 0) throw unknownDevice();
}
