// The delivery pass (the exports/deliver schedule): for each enabled destination that is due, read the settled
// events after its cursor a batch at a time, map and send them, and move the cursor past a batch only once the
// receiver took it, so that delivery is at least once and a restart resumes at the cursor. A failure keeps the
// cursor and waits: the receiver's Retry-After (429/503) when it gave one, else exports.backoff doubled per
// failure with jitter, up to exports.max_backoff, which a permanent failure (400, 401, 403…) waits at once.
// The pass runs apart from ingest (its own schedule) and stops after exports.time_budget, between batches.
import { sql } from 'drizzle-orm';
import type { Config } from '../../core/config/schema.ts';
import type { Db } from '../../core/db/database.ts';
import { col, queryRows, type RowOf } from '../../core/db/query.ts';
import { intParam, uuidParam } from '../../core/db/sql-values.ts';
import type { DeliveryResult } from '../destinations/destination.ts';
import { SENT_KINDS, senderFor } from '../destinations/registry.ts';
import { destinationSecret } from '../destinations/secrets.ts';
import { claimDue, dueAgain } from './claim.ts';
import { deliverClasses } from './classes.ts';
import { failureAssignments } from './failure.ts';
import { type Batch, type ExportCursor, readBatch } from './read.ts';

/** Batches a destination may have sent and not yet settled: one being taken while the next is read and sent. */
const IN_FLIGHT = 2;

/** The kinds this pass sends (another pass may serve the others). */
const SENT_KIND_LIST = sql.raw(SENT_KINDS.map((k) => `'${k}'`).join(', '));

const DUE = {
  id: col.text,
  kind: col.text,
  name: col.text,
  settings: col.text,
  secret_ref: col.nullable(col.text),
  x: col.text,
  cid: col.text,
  attempts: col.number,
} as const;
type Due = RowOf<typeof DUE>;

export interface DestinationPass {
  name: string;
  delivered: number;
  batches: number;
  /** The failure that ended the pass for this destination, if one did. */
  error?: string;
}

export interface DeliveryOptions {
  /** Reads a secret from Secrets Manager (tests give their own). */
  readSecret?: (id: string) => Promise<string>;
  /** Jitter in [0, 1); Math.random by default. */
  random?: () => number;
}

const sameCursor = (c: ExportCursor) => sql`cursor_xid = ${c.xid}::xid8 AND cursor_id = ${c.id}::bigint`;

async function recordFailure(
  db: Db,
  config: Config,
  row: Due,
  attempts: number,
  result: Extract<DeliveryResult, { ok: false }>,
  random: () => number,
): Promise<void> {
  await db.execute(sql`UPDATE export_cursors SET ${failureAssignments(config, attempts, result, random)}
    WHERE destination_id = ${uuidParam(row.id)}`);
}

/** Moves the cursor past a delivered batch, unless a replay or an update moved it meanwhile (then false). */
async function advance(
  db: Db,
  row: Due,
  from: ExportCursor,
  to: ExportCursor,
  count: number,
  retried: boolean,
): Promise<boolean> {
  const moved = await queryRows(
    db,
    sql`UPDATE export_cursors SET cursor_xid = ${to.xid}::xid8, cursor_id = ${to.id}::bigint, attempts = 0,
      last_error = NULL, last_error_permanent = false, last_status = NULL, last_success_at = now(),
      delivered = delivered + ${intParam(count)}, resent = resent + ${intParam(retried ? count : 0)}
      WHERE destination_id = ${uuidParam(row.id)} AND ${sameCursor(from)} RETURNING true AS ok`,
    { ok: col.bool },
  );
  return moved.length === 1;
}

async function deliverOne(
  db: Db,
  config: Config,
  row: Due,
  until: number,
  options: DeliveryOptions,
): Promise<DestinationPass> {
  const random = options.random ?? Math.random;
  const pass: DestinationPass = { name: row.name, delivered: 0, batches: 0 };
  let sender: ReturnType<typeof senderFor>;
  try {
    const secret = await destinationSecret(config, row.secret_ref, options.readSecret);
    sender = senderFor(row.kind, JSON.parse(row.settings), secret, {
      timeoutMs: config.exports.timeout,
      securityLakeEndpoint: config.exports.security_lake_endpoint,
    });
  } catch (err) {
    pass.error = (err as Error).message;
    await recordFailure(
      db,
      config,
      row,
      row.attempts + 1,
      { ok: false, permanent: true, message: pass.error },
      random,
    );
    return pass;
  }
  let cursor: ExportCursor = { xid: row.x, id: row.cid };
  let retried = row.attempts > 0;
  let next: Promise<Batch> = readBatch(db, cursor, config.exports.batch);
  // Batches sent and not yet settled, oldest first: the next batch is read and sent while the receiver takes the
  // previous one, and each is settled (the cursor moved past it) in order, so the cursor still moves only past what
  // the receiver took. After a failure the batches sent behind the failed one are sent again with it (at least once).
  const inFlight: { batch: Batch & { last: ExportCursor }; sent: Promise<DeliveryResult> }[] = [];
  /** Settles the oldest batch in flight; false when the pass ends for this destination. */
  const settle = async (): Promise<boolean> => {
    const oldest = inFlight.shift();
    if (!oldest) return true;
    const result = await oldest.sent;
    if (!result.ok) {
      pass.error = result.message;
      await recordFailure(db, config, row, row.attempts + 1, result, random);
      return false;
    }
    const { sources, last } = oldest.batch;
    if (!(await advance(db, row, cursor, last, sources.length, retried))) return false;
    pass.delivered += sources.length;
    pass.batches++;
    cursor = last;
    retried = false;
    return true;
  };
  try {
    let going = true;
    while (going && Date.now() < until) {
      const batch = await next;
      const { last } = batch;
      if (!last) break;
      next = readBatch(db, last, config.exports.batch);
      inFlight.push({ batch: { sources: batch.sources, last }, sent: sender.send(batch.sources) });
      if (inFlight.length >= IN_FLIGHT) going = await settle();
    }
    while (going && inFlight.length > 0) going = await settle();
    if (!going) return pass;
  } finally {
    // Reads and sends begun for batches the pass will not settle: their results (or failures) are dropped.
    await Promise.all([next.catch(() => undefined), ...inFlight.map((f) => f.sent.catch(() => undefined))]);
  }
  await dueAgain(db, 'export_cursors', sql`destination_id = ${uuidParam(row.id)}`);
  return pass;
}

/**
 * One delivery pass over the due destinations, side by side. Each is claimed first (its next attempt moved past
 * the pass), so that an overlapping pass leaves it alone.
 */
export async function deliverExports(
  db: Db,
  config: Config,
  options: DeliveryOptions = {},
): Promise<DestinationPass[]> {
  const until = Date.now() + config.exports.time_budget;
  const due = await claimDue(db, config, {
    table: 'export_cursors',
    where: sql`d.kind IN (${SENT_KIND_LIST})`,
    set: sql`last_attempt_at = now()`,
    returning: sql`d.id::text AS id, d.kind, d.name, d.settings::text AS settings, d.secret_ref,
      c.cursor_xid::text AS x, c.cursor_id::text AS cid, c.attempts`,
    shape: DUE,
  });
  const classes = deliverClasses(db, config, until, options);
  const passes = await Promise.all(due.map((row) => deliverOne(db, config, row, until, options)));
  return [...passes, ...(await classes)];
}
