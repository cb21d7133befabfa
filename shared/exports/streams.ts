// Export destinations as the admin API manages them (docs/exports.md): create, list, change, delete, their
// delivery status with its lag, and replay from a time. The delivery itself: delivery/deliver.ts.
import { sql } from 'drizzle-orm';
import type { AuditActor } from '../audit/audit.ts';
import { recordAudit } from '../audit/audit.ts';
import type { Db } from '../core/db/database.ts';
import { sqlState } from '../core/db/errors.ts';
import { col, queryRows } from '../core/db/query.ts';
import { jsonParam, textParam, tsParam, uuidParam } from '../core/db/sql-values.ts';
import { conflict, invalidField, notFound } from '../core/errors.ts';
import { iso } from '../observability/cursor.ts';
import {
  classLagSql,
  classReplaySql,
  insertClassCursors,
  type StreamedClass,
  TAKES_CLASS,
} from './class-positions.ts';
import { afterCursor } from './delivery/read.ts';
import { DESTINATION_KINDS, type SentKind } from './destinations/registry.ts';
import type {
  CreateDestinationBody,
  DestinationStatus,
  DestinationView,
  UpdateDestinationBody,
} from './schemas.ts';

export { deliverExports } from './delivery/deliver.ts';

const VIEW = sql`json_build_object('id', d.id::text, 'kind', d.kind, 'name', d.name, 'settings', d.settings,
  'secret_ref', d.secret_ref, 'enabled', d.enabled, 'created_at', ${iso(sql`d.created_at`)},
  'updated_at', ${iso(sql`d.updated_at`)})::text`;

const parseView = (rows: readonly Record<string, unknown>[]): DestinationView[] =>
  rows.map((r) => JSON.parse(col.text(r.j, 'j')) as DestinationView);

/** The settings of `kind` as stored (defaults filled in), or 400 naming the field. */
function checkSettings(kind: string, settings: unknown): Record<string, unknown> {
  const k = DESTINATION_KINDS[kind as SentKind];
  if (!k) throw invalidField('body', ['kind'], 'this service does not send to this kind yet');
  const parsed = k.settings.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidField('body', ['settings', ...(issue?.path ?? [])], issue?.message ?? 'invalid');
  }
  return parsed.data as Record<string, unknown>;
}

function checkSecret(kind: string, secretRef: string | null | undefined) {
  const k = DESTINATION_KINDS[kind as SentKind];
  if (k?.secret.required && !secretRef)
    throw invalidField('body', ['secret_ref'], `is required for ${kind}: the name of ${k.secret.what}`);
  if (k?.secret.refused && secretRef)
    throw invalidField('body', ['secret_ref'], `is not taken by ${kind}: ${k.secret.what}`);
}

export async function listDestinations(db: Db): Promise<{ destinations: DestinationView[] }> {
  const rows = await queryRows(db, sql`SELECT ${VIEW} AS j FROM export_destinations d ORDER BY d.name`, {
    j: col.text,
  });
  return { destinations: parseView(rows) };
}

export async function getDestination(db: Db, id: string): Promise<DestinationView> {
  const [row] = parseView(
    await queryRows(db, sql`SELECT ${VIEW} AS j FROM export_destinations d WHERE d.id = ${uuidParam(id)}`),
  );
  if (!row) throw notFound('No export destination with this id.');
  return row;
}

export async function createDestination(
  db: Db,
  body: CreateDestinationBody,
  actor: AuditActor,
): Promise<DestinationView> {
  const settings = checkSettings(body.kind, body.settings);
  checkSecret(body.kind, body.secret_ref);
  try {
    return await db.transaction(async (tx) => {
      const [row] = parseView(
        await queryRows(
          tx,
          sql`INSERT INTO export_destinations AS d (kind, name, settings, secret_ref, enabled)
            VALUES (${body.kind}, ${body.name}, ${jsonParam(settings)}, ${textParam(body.secret_ref)},
              ${body.enabled}) RETURNING ${VIEW} AS j`,
        ),
      );
      if (!row) throw new Error('insert returned nothing');
      // `now`: after every event of a transaction finished by now; `oldest`: before every event.
      const start = body.start === 'now' ? sql`pg_snapshot_xmin(pg_current_snapshot())` : sql`'0'::xid8`;
      await tx.execute(sql`INSERT INTO export_cursors (destination_id, cursor_xid, cursor_id)
        VALUES (${uuidParam(row.id)}, ${start}, 0)`);
      await tx.execute(insertClassCursors(row.id, body.start));
      await recordAudit(tx, {
        actionType: 'export.destination_created',
        actor,
        resourceType: 'export_destination',
        resourceId: row.id,
        metadata: { kind: row.kind, name: row.name, settings, start: body.start },
      });
      return row;
    });
  } catch (err) {
    if (sqlState(err) === '23505')
      throw conflict('destination_exists', 'A destination with this name exists.');
    throw err;
  }
}

export async function updateDestination(
  db: Db,
  id: string,
  body: UpdateDestinationBody,
  actor: AuditActor,
): Promise<DestinationView> {
  const current = await getDestination(db, id);
  const settings = body.settings === undefined ? undefined : checkSettings(current.kind, body.settings);
  const secretRef = body.secret_ref === undefined ? current.secret_ref : body.secret_ref;
  checkSecret(current.kind, secretRef);
  try {
    return await db.transaction(async (tx) => {
      const [row] = parseView(
        await queryRows(
          tx,
          sql`UPDATE export_destinations d SET name = ${body.name ?? current.name},
            settings = ${jsonParam(settings ?? current.settings)}, secret_ref = ${textParam(secretRef)},
            enabled = ${body.enabled ?? current.enabled}, updated_at = now()
            WHERE d.id = ${uuidParam(id)} RETURNING ${VIEW} AS j`,
        ),
      );
      if (!row) throw notFound('No export destination with this id.');
      // A change may be the fix of what failed: try again at the next pass.
      await tx.execute(sql`UPDATE export_cursors SET attempts = 0, next_attempt_at = now()
        WHERE destination_id = ${uuidParam(id)}`);
      await tx.execute(sql`UPDATE export_class_cursors SET attempts = 0, next_attempt_at = now()
        WHERE destination_id = ${uuidParam(id)}`);
      await recordAudit(tx, {
        actionType: 'export.destination_updated',
        actor,
        resourceType: 'export_destination',
        resourceId: id,
        metadata: { changed: Object.keys(body), settings: row.settings, enabled: row.enabled },
      });
      return row;
    });
  } catch (err) {
    if (sqlState(err) === '23505')
      throw conflict('destination_exists', 'A destination with this name exists.');
    throw err;
  }
}

export async function deleteDestination(db: Db, id: string, actor: AuditActor) {
  return db.transaction(async (tx) => {
    const gone = await queryRows(
      tx,
      sql`DELETE FROM export_destinations WHERE id = ${uuidParam(id)} RETURNING name`,
      { name: col.text },
    );
    if (gone.length === 0) throw notFound('No export destination with this id.');
    await recordAudit(tx, {
      actionType: 'export.destination_deleted',
      actor,
      resourceType: 'export_destination',
      resourceId: id,
      metadata: { name: gone[0]?.name },
    });
    return { id, deleted: true as const };
  });
}

async function statusOf(db: Db, id: string): Promise<DestinationStatus> {
  const [row] = await queryRows(
    db,
    sql`SELECT c.cursor_xid::text AS x, c.cursor_id::text AS cid, json_build_object('delivered', c.delivered,
        'resent', c.resent, 'attempts', c.attempts, 'last_error', c.last_error,
        'last_error_permanent', c.last_error_permanent, 'last_status', c.last_status,
        'last_attempt_at', ${iso(sql`c.last_attempt_at`)}, 'last_success_at', ${iso(sql`c.last_success_at`)},
        'next_attempt_at', ${iso(sql`c.next_attempt_at`)}, 'replayed_from', ${iso(sql`c.replayed_from`)})::text AS j
      FROM export_cursors c WHERE c.destination_id = ${uuidParam(id)}`,
    { x: col.text, cid: col.text, j: col.text },
  );
  if (!row) throw notFound('No export destination with this id.');
  const lag = await destinationLag(db, { xid: row.x, id: row.cid });
  const rest = JSON.parse(row.j) as Omit<
    DestinationStatus,
    'lag_events' | 'lag_seconds' | 'cursor' | 'classes'
  >;
  return {
    cursor: `${row.x}:${row.cid}`,
    ...lag,
    ...rest,
    delivered: Number(rest.delivered),
    resent: Number(rest.resent),
    classes: await classStatuses(db, id),
  };
}

/** Each streamed class's cursor, whether the destination takes the class, and what of its source it has not had. */
async function classStatuses(db: Db, id: string): Promise<DestinationStatus['classes']> {
  const rows = await queryRows(
    db,
    sql`SELECT json_build_object('class', c.class_key, 'position', c.position, 'delivered', c.delivered,
        'sent', ${TAKES_CLASS},
        'attempts', c.attempts, 'last_error', c.last_error, 'last_error_permanent', c.last_error_permanent,
        'last_success_at', ${iso(sql`c.last_success_at`)}, 'next_attempt_at', ${iso(sql`c.next_attempt_at`)})::text AS j
      FROM export_class_cursors c JOIN export_destinations d ON d.id = c.destination_id
      WHERE c.destination_id = ${uuidParam(id)} ORDER BY c.class_key`,
    { j: col.text },
  );
  return Promise.all(
    rows.map(async (r) => {
      const c = JSON.parse(r.j) as Omit<DestinationStatus['classes'][number], 'lag_records' | 'lag_seconds'>;
      const [lag] = await queryRows(db, classLagSql(c.class, c.position), {
        n: col.number,
        s: col.nullable(col.number),
      });
      return {
        ...c,
        delivered: Number(c.delivered),
        lag_records: lag?.n ?? 0,
        lag_seconds: Math.max(0, lag?.s ?? 0),
      };
    }),
  );
}

/** What a destination has not received yet: the stored events after its cursor, and the oldest one's age. */
export async function destinationLag(
  db: Db,
  cursor: { xid: string; id: string },
): Promise<{ lag_events: number; lag_seconds: number }> {
  const [row] = await queryRows(
    db,
    sql`SELECT count(*)::text AS n,
        extract(epoch FROM now() - min(e.received_at))::float8::text AS s
      FROM observability_events e WHERE ${afterCursor(cursor)}`,
    { n: col.text, s: col.nullable(col.text) },
  );
  return { lag_events: Number(row?.n ?? 0), lag_seconds: Math.max(0, Number(row?.s ?? 0)) };
}

/**
 * The metric the stack's ExportLag alarm watches (infra/monitoring.ts): the age of the oldest record a destination
 * has not received, over its tool calls and the class streams it takes.
 */
export const EXPORT_LAG_METRIC = 'ExportLagSeconds';

export interface DestinationLag {
  name: string;
  /** The worst of the destination's streams: the tool calls' or a class stream's lag. */
  lag_seconds: number;
  /** The stream that lags most: `apiActivity` (the tool calls) or a class. */
  worst: 'apiActivity' | StreamedClass;
  lag_events: number;
  /** The lag of each class stream the destination takes. */
  classes: Array<{ class: StreamedClass; lag_records: number; lag_seconds: number }>;
}

/** Every enabled destination's lag (the exports/deliver schedule reports it as a metric the stack's alarm watches). */
export async function enabledDestinationLags(db: Db): Promise<DestinationLag[]> {
  const rows = await queryRows(
    db,
    sql`SELECT d.id::text AS id, d.name, c.cursor_xid::text AS x, c.cursor_id::text AS cid
      FROM export_destinations d JOIN export_cursors c ON c.destination_id = d.id WHERE d.enabled ORDER BY d.name`,
    { id: col.text, name: col.text, x: col.text, cid: col.text },
  );
  return Promise.all(
    rows.map(async (r) => {
      const calls = await destinationLag(db, { xid: r.x, id: r.cid });
      const classes = (await classStatuses(db, r.id))
        .filter((c) => c.sent)
        .map((c) => ({ class: c.class, lag_records: c.lag_records, lag_seconds: c.lag_seconds }));
      const worst = classes.reduce<{ worst: DestinationLag['worst']; lag_seconds: number }>(
        (w, c) => (c.lag_seconds > w.lag_seconds ? { worst: c.class, lag_seconds: c.lag_seconds } : w),
        { worst: 'apiActivity', lag_seconds: calls.lag_seconds },
      );
      return { name: r.name, ...worst, lag_events: calls.lag_events, classes };
    }),
  );
}

export async function destinationStatus(db: Db, id: string) {
  const destination = await getDestination(db, id);
  return { destination, status: await statusOf(db, id) };
}

/**
 * Moves each class cursor of a lake back to just before the first record of its source changed at or after `from`
 * (never forward); gives the classes it moved. Runs in the replay's transaction.
 */
async function replayClasses(tx: Db, id: string, from: Date): Promise<StreamedClass[]> {
  const cursors = await queryRows(
    tx,
    sql`SELECT class_key, position FROM export_class_cursors WHERE destination_id = ${uuidParam(id)}
      ORDER BY class_key FOR UPDATE`,
    { class_key: col.text, position: col.text },
  );
  const moved: StreamedClass[] = [];
  for (const c of cursors) {
    const key = c.class_key as StreamedClass;
    const [first] = await queryRows(tx, classReplaySql(key, c.position, from), {
      p: col.text,
      behind: col.bool,
    });
    if (!first?.behind) continue;
    await tx.execute(sql`UPDATE export_class_cursors SET position = ${first.p}, attempts = 0, next_attempt_at = now()
      WHERE destination_id = ${uuidParam(id)} AND class_key = ${key}`);
    moved.push(key);
  }
  return moved;
}

/**
 * Sends again every event from `from` (event_time) on: the cursor moves back to just before the first of them in
 * delivery order, so the replay also sends the few later-ordered events stored before `from` (at least once).
 * A lake's class streams move back too, each to its first record changed from `from` on (replayClasses).
 * A pass in progress stops at its next batch (its cursor no longer matches).
 */
export async function replayDestination(db: Db, id: string, from: string, actor: AuditActor) {
  const destination = await getDestination(db, id);
  const fromDate = new Date(from);
  const replayed = await db.transaction(async (tx) => {
    const [first] = await queryRows(
      tx,
      sql`SELECT e.ingest_xid::text AS xid, (e.id - 1)::text AS id FROM observability_events e
        WHERE e.event_time >= ${tsParam(fromDate)} AND e.ingest_xid IS NOT NULL
        ORDER BY e.ingest_xid, e.id LIMIT 1`,
      { xid: col.text, id: col.text },
    );
    const [cursor] = await queryRows(
      tx,
      sql`SELECT cursor_xid::text AS xid, cursor_id::text AS id FROM export_cursors
        WHERE destination_id = ${uuidParam(id)} FOR UPDATE`,
      { xid: col.text, id: col.text },
    );
    if (!cursor) throw notFound('No export destination with this id.');
    let n = 0;
    // Only ever back: events after the cursor are not delivered yet, and will be anyway.
    const behind =
      first !== undefined &&
      (BigInt(first.xid) < BigInt(cursor.xid) ||
        (BigInt(first.xid) === BigInt(cursor.xid) && BigInt(first.id) < BigInt(cursor.id)));
    if (first && behind) {
      const [counted] = await queryRows(
        tx,
        sql`SELECT count(*)::text AS n FROM observability_events e
          WHERE ${afterCursor(first)} AND NOT (${afterCursor(cursor)})`,
        { n: col.text },
      );
      n = Number(counted?.n ?? 0);
      await tx.execute(sql`UPDATE export_cursors SET cursor_xid = ${first.xid}::xid8, cursor_id = ${first.id}::bigint,
        attempts = 0, next_attempt_at = now(), resent = resent + ${n}::bigint
        WHERE destination_id = ${uuidParam(id)}`);
    }
    await tx.execute(sql`UPDATE export_cursors SET replayed_from = ${tsParam(fromDate)}
      WHERE destination_id = ${uuidParam(id)}`);
    const classes = destination.kind === 'security_lake' ? await replayClasses(tx, id, fromDate) : [];
    await recordAudit(tx, {
      actionType: 'export.destination_replayed',
      actor,
      resourceType: 'export_destination',
      resourceId: id,
      metadata: { name: destination.name, from: fromDate.toISOString(), events: n, classes },
    });
    return n;
  });
  return { destination, status: await statusOf(db, id), replayed };
}
