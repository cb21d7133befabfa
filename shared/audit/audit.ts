import { randomUUID } from 'node:crypto';
import { and, asc, count, desc, inArray, not, type SQL, sql } from 'drizzle-orm';
import { canonicalize } from '../core/canonical-json.ts';
import type { Db } from '../core/db/database.ts';
import { auditChainVerified, auditLogs } from '../core/db/schema.ts';
import { jsonParam, textEquals, tsParam, uuidParam } from '../core/db/sql-values.ts';
import { AUDIT_TIME_BOUNDS } from '../core/schemas/input-rules.ts';
import {
  type AnchoredHead,
  type AnchorResults,
  type AuditContent,
  type ChainPoint,
  ChainWalk,
  sha256Hex,
} from './chain.ts';
import { type ListAuditLogsQuery, ROUTINE_ACTIONS } from './schemas.ts';

export interface AuditActor {
  id: string;
  email: string;
  ipAddress: string;
}

export interface AuditInput {
  actionType: string;
  actor: AuditActor;
  resourceType: string;
  resourceId: string;
  source?: 'api' | 'env-svc' | 'logshipper';
  level?: 'info' | 'warn' | 'error';
  metadata?: Record<string, unknown>;
  environmentId?: string;
  environmentName?: string;
  appName?: string;
  containerId?: string;
  stage?: string;
  timestamp?: Date;
}

/** A row's fields that its hash covers, its instants as read (Dates). */
type AuditRowFields = Omit<AuditContent, 'timestamp' | 'createdAt'> & { timestamp: Date; createdAt: Date };

/** The fields of a row that its content hash covers, as hashed (chain.ts). */
export const auditContentOf = (row: AuditRowFields): AuditContent => ({
  id: row.id,
  actionType: row.actionType,
  actorEmail: row.actorEmail,
  actorId: row.actorId,
  appName: row.appName,
  containerId: row.containerId,
  environmentId: row.environmentId,
  environmentName: row.environmentName,
  ipAddress: row.ipAddress,
  level: row.level,
  resourceId: row.resourceId,
  resourceType: row.resourceType,
  stage: row.stage,
  source: row.source,
  timestamp: row.timestamp.toISOString(),
  createdAt: row.createdAt.toISOString(),
  metadata: row.metadata,
});

/** The fields a record's content hash covers, in one fixed form (RFC 8785 canonical JSON). */
export const auditContent = (row: AuditRowFields): string => canonicalize(auditContentOf(row));

/**
 * The values of one audit row, with `hash` = its content hash; the database chains it on insert. Its timestamp is in
 * AUDIT_TIME_BOUNDS (request validation refuses others), the range every driver reads back as the text hashed.
 */
export function auditValues(input: AuditInput) {
  const now = new Date();
  const at = Math.floor((input.timestamp ?? now).getTime());
  if (!(at >= AUDIT_TIME_BOUNDS.from && at < AUDIT_TIME_BOUNDS.until)) {
    throw new RangeError(`an audit record's timestamp ${AUDIT_TIME_BOUNDS.says}`);
  }
  const record = {
    id: randomUUID(),
    actionType: input.actionType,
    actorEmail: input.actor.email,
    actorId: input.actor.id,
    appName: input.appName ?? '',
    containerId: input.containerId ?? '',
    environmentId: input.environmentId ?? '',
    environmentName: input.environmentName ?? '',
    ipAddress: input.actor.ipAddress,
    level: input.level ?? 'info',
    resourceId: input.resourceId,
    resourceType: input.resourceType,
    stage: input.stage ?? '',
    source: input.source ?? 'api',
    // Millisecond precision, so the stored value hashes the same when read back.
    timestamp: new Date(at),
    createdAt: now,
    metadata: input.metadata ?? {},
  };
  return { ...record, hash: sha256Hex(auditContent(record)) };
}

const AUDIT_COLUMNS = sql`(id, action_type, actor_email, actor_id, app_name, container_id, environment_id,
      environment_name, ip_address, level, resource_id, resource_type, stage, source, timestamp, created_at, metadata, hash)`;

/**
 * The INSERT of one audit record as a statement fragment, so that it can also be one step of a larger
 * single-statement write (a CTE), committed with the change it records. `guard` (an SQL condition) makes the
 * insert conditional, e.g. on the replay check of the same statement having passed.
 */
export function auditInsertSql(input: AuditInput, guard?: SQL): SQL {
  const v = auditValues(input);
  return sql`INSERT INTO audit_logs ${AUDIT_COLUMNS}
    SELECT ${uuidParam(v.id)}, ${v.actionType}, ${v.actorEmail}, ${v.actorId}, ${v.appName}, ${v.containerId},
      ${v.environmentId}, ${v.environmentName}, ${v.ipAddress}, ${v.level}, ${v.resourceId}, ${v.resourceType},
      ${v.stage}, ${v.source}, ${tsParam(v.timestamp)}, ${tsParam(v.createdAt)}, ${jsonParam(v.metadata)}, ${v.hash}
    ${guard ? sql`WHERE ${guard}` : sql``}`;
}

/**
 * A value of an audit record that the statement inserting it computes: an expression over the columns of the rows
 * the records are inserted from. `text` is any text; `integer` a whole number.
 */
export interface AuditSqlValue {
  sql: SQL;
  type: 'text' | 'integer';
}

/**
 * The INSERT of one audit record per row of `rows` (a SELECT), as a statement fragment, for a change whose outcome
 * only the database knows (what an upsert of the same statement returned): the members named in `computed` are
 * expressions over the columns of `rows`, the rest is `input`. The content hash is then computed by the database,
 * over the very text auditContent gives for the stored row: the record is canonicalized here with a placeholder for
 * each computed value, and the statement puts the value's JSON text in its place (PostgreSQL's to_json of a text
 * escapes exactly as RFC 8785 does, and an integer's text is its canonical form). So such records verify like any
 * other (verifyAuditChain), and commit with the change they record.
 */
export function auditInsertFromRowsSql(
  input: AuditInput,
  computed: { actorEmail?: SQL; resourceId?: SQL; metadata?: Record<string, AuditSqlValue> },
  rows: SQL,
): SQL {
  const token = randomUUID();
  const slots = new Map<string, SQL>();
  const slot = (json: SQL) => {
    const placeholder = `@audit-value-${token}-${slots.size}@`;
    slots.set(JSON.stringify(placeholder), json);
    return placeholder;
  };
  const asText = (value: SQL) => sql`to_json((${value})::text)::text`;
  const id = slot(asText(sql`r.audit_id`));
  const actorEmail = computed.actorEmail && slot(asText(computed.actorEmail));
  const resourceId = computed.resourceId && slot(asText(computed.resourceId));
  const metadataSlots = Object.fromEntries(
    Object.entries(computed.metadata ?? {}).map(([key, value]) => [
      key,
      slot(value.type === 'text' ? asText(value.sql) : sql`((${value.sql})::bigint)::text`),
    ]),
  );
  const v = auditValues({
    ...input,
    actor: { ...input.actor, email: actorEmail ?? input.actor.email },
    resourceId: resourceId ?? input.resourceId,
    metadata: { ...input.metadata, ...metadataSlots },
  });
  // The canonical text, cut at each placeholder (in the order they occur) and joined again with the values' JSON.
  const content = auditContent({ ...v, id });
  const cuts = [...slots.keys()]
    .map((quoted) => {
      const at = content.indexOf(quoted);
      if (at < 0 || content.indexOf(quoted, at + 1) >= 0) throw new Error('audit placeholder not found once');
      return { at, quoted };
    })
    .sort((a, b) => a.at - b.at);
  const pieces: SQL[] = [];
  let from = 0;
  for (const { at, quoted } of cuts) {
    pieces.push(sql`${content.slice(from, at)}::text`, slots.get(quoted) as SQL);
    from = at + quoted.length;
  }
  pieces.push(sql`${content.slice(from)}::text`);
  const staticMetadata = Object.fromEntries(
    Object.entries(v.metadata).filter(([key]) => !(key in metadataSlots)),
  );
  const computedMetadata = Object.entries(computed.metadata ?? {}).map(
    ([key, value]) =>
      sql`${key}::text, (${value.sql})::${sql.raw(value.type === 'text' ? 'text' : 'bigint')}`,
  );
  const column = (value: SQL | undefined, fallback: string) =>
    value ? sql`(${value})::text` : sql`${fallback}`;
  return sql`INSERT INTO audit_logs ${AUDIT_COLUMNS}
    SELECT r.audit_id, ${v.actionType}, ${column(computed.actorEmail, v.actorEmail)}, ${v.actorId}, ${v.appName},
      ${v.containerId}, ${v.environmentId}, ${v.environmentName}, ${v.ipAddress}, ${v.level},
      ${column(computed.resourceId, v.resourceId)}, ${v.resourceType}, ${v.stage}, ${v.source}, ${tsParam(v.timestamp)},
      ${tsParam(v.createdAt)},
      ${jsonParam(staticMetadata)}${computedMetadata.length ? sql` || jsonb_build_object(${sql.join(computedMetadata, sql`, `)})` : sql``},
      encode(sha256(convert_to(${sql.join(pieces, sql` || `)}, 'UTF8')), 'hex')
    FROM (SELECT gen_random_uuid() AS audit_id, q.* FROM (${rows}) AS q) AS r`;
}

/**
 * Writes one audit record. Call it with the `tx` of the change it describes, so both commit or neither does.
 * It is a single INSERT: the chain (prev_hash, hash, seq) is completed by a trigger under a lock.
 */
export async function recordAudit(tx: Db, input: AuditInput): Promise<void> {
  await tx.execute(auditInsertSql(input));
}

/** The anchors a verify compares the chain with (anchors/anchors.ts, readAnchors), from where they were read. */
export interface AnchorsToCheck {
  location: string;
  anchors: readonly AnchoredHead[];
  /** The first anchor whose signature or key does not verify, if any. */
  badSignature: AnchoredHead | null;
}

/** The records after `afterSeq`, in seq order. */
const chainPage = (db: Db, afterSeq: number, limit: number) =>
  db
    .select()
    .from(auditLogs)
    .where(sql`${auditLogs.seq} > ${afterSeq}`)
    .orderBy(asc(auditLogs.seq))
    .limit(limit);

/**
 * Walks the chain in seq order, recomputing each content hash and link. Reports the first broken record, if any, and
 * the head: the last record of the intact chain (before the break, when there is one); `atSeq` also reports the
 * record at that seq, to compare with a kept anchor. With `anchors`, also whether the chain passes through each
 * signed anchor's (seq, hash, count): a chain rewritten consistently (every hash recomputed) still differs from them.
 * `from` starts after a point already verified (the anchor function walks from its last anchor). Reads in pages so
 * that memory stays flat however long the log is. An intact walk that reached a head stores it as the chain's last
 * verified point (verifyAuditChainSinceVerified walks on from it).
 */
export async function verifyAuditChain(
  db: Db,
  options: {
    pageSize?: number;
    atSeq?: number;
    anchors?: AnchorsToCheck;
    from?: { seq: number; hash: string; count: number };
  } = {},
) {
  const pageSize = options.pageSize ?? 1000;
  const walk = new ChainWalk(options.anchors?.anchors, options.from, options.anchors?.badSignature);
  let lastSeq = options.from?.seq ?? 0;
  let at: ChainPoint | null = null;
  const result = () => {
    const anchorResults: AnchorResults | undefined =
      options.anchors && walk.anchorResults(options.anchors.location);
    return {
      intact: walk.broken === null && !anchorResults?.first_mismatch,
      checked: walk.checked,
      broken_at: walk.broken,
      head: walk.head,
      ...(options.atSeq === undefined ? {} : { at }),
      ...(anchorResults ? { anchors: anchorResults } : {}),
    };
  };
  for (;;) {
    const rows = await chainPage(db, lastSeq, pageSize);
    for (const row of rows) {
      if (walk.step({ seq: row.seq, prevHash: row.prevHash, hash: row.hash, content: auditContentOf(row) }))
        return result();
      lastSeq = row.seq;
      if (row.seq === options.atSeq) at = walk.head;
    }
    if (rows.length < pageSize) {
      const verified = result();
      if (verified.intact && verified.head) {
        await storeVerifiedPoint(db, {
          seq: verified.head.seq,
          hash: verified.head.hash,
          count: (options.from?.count ?? 0) + verified.checked,
        });
      }
      return verified;
    }
  }
}

/** Keeps the newest verified point: a walk that ends before the stored one (a slower concurrent one) leaves it. */
async function storeVerifiedPoint(db: Db, point: { seq: number; hash: string; count: number }) {
  await db
    .insert(auditChainVerified)
    .values({ id: true, ...point, verifiedAt: new Date() })
    .onConflictDoUpdate({
      target: auditChainVerified.id,
      set: { seq: point.seq, hash: point.hash, count: point.count, verifiedAt: new Date() },
      setWhere: sql`${auditChainVerified.seq} <= ${point.seq}`,
    });
}

/**
 * verifyAuditChain from the last verified point instead of the first record, for a view that shows the chain's state
 * on every load (the console's banner): the records before the point were walked when it was stored, so only those
 * after it are hashed now. The point is used only while the chain still has its record with its hash; else, or
 * without one, the walk starts at the first record. Anchors at or before the point were compared when it was stored.
 * `verified_from` says where the walk started (null: the first record).
 */
export async function verifyAuditChainSinceVerified(db: Db, options: { anchors?: AnchorsToCheck } = {}) {
  const [point] = await db
    .select({
      seq: auditChainVerified.seq,
      hash: auditChainVerified.hash,
      count: auditChainVerified.count,
      verifiedAt: auditChainVerified.verifiedAt,
      createdAt: auditLogs.createdAt,
    })
    .from(auditChainVerified)
    .innerJoin(
      auditLogs,
      and(
        sql`${auditLogs.seq} = ${auditChainVerified.seq}`,
        sql`${auditLogs.hash} = ${auditChainVerified.hash}`,
      ),
    );
  if (!point) return { ...(await verifyAuditChain(db, options)), verified_from: null };
  const { anchors } = options;
  const walked = await verifyAuditChain(db, {
    from: point,
    ...(anchors
      ? { anchors: { ...anchors, anchors: anchors.anchors.filter((a) => a.seq > point.seq) } }
      : {}),
  });
  return {
    ...walked,
    // Nothing intact after the point: the head is the point itself.
    head: walked.head ?? { seq: point.seq, hash: point.hash, created_at: point.createdAt.toISOString() },
    verified_from: { seq: point.seq, count: point.count, verified_at: point.verifiedAt.toISOString() },
  };
}

/**
 * One page of the chain as an export: a JSON line per record after `afterSeq`, in seq order, with its seq, links and
 * the fields its hash covers exactly as hashed, so that an auditor recomputes the chain from the export alone.
 */
export async function exportAuditChain(db: Db, afterSeq: number, limit: number) {
  return (await chainPage(db, afterSeq, limit)).map((row) => ({
    seq: row.seq,
    prev_hash: row.prevHash,
    hash: row.hash,
    record: auditContentOf(row),
  }));
}

type AuditRow = typeof auditLogs.$inferSelect;

export const toAuditView = (row: AuditRow, resourceName: string | null = null) => ({
  id: row.id,
  action_type: row.actionType,
  actor_email: row.actorEmail,
  actor_id: row.actorId,
  app_name: row.appName,
  container_id: row.containerId,
  environment_id: row.environmentId,
  environment_name: row.environmentName,
  ip_address: row.ipAddress,
  level: row.level,
  resource_id: row.resourceId,
  resource_type: row.resourceType,
  resource_name: resourceName,
  stage: row.stage,
  source: row.source as 'api' | 'env-svc' | 'logshipper',
  timestamp: row.timestamp.toISOString(),
  created_at: row.createdAt.toISOString(),
  metadata: row.metadata,
});

const UUID_TEXT = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/** The resource's name, looked up by its primary key (a resource id that is no UUID names nothing). */
const resourceName = sql<string | null>`CASE WHEN ${auditLogs.resourceId} !~ ${UUID_TEXT} THEN NULL
  WHEN ${auditLogs.resourceType} = 'device'
    THEN (SELECT d.serial_number FROM devices d WHERE d.id = ${auditLogs.resourceId}::uuid)
  WHEN ${auditLogs.resourceType} = 'user'
    THEN (SELECT u.email FROM users u WHERE u.id = ${auditLogs.resourceId}::uuid)
  WHEN ${auditLogs.resourceType} = 'request'
    THEN (SELECT r.title FROM requests r WHERE r.id = ${auditLogs.resourceId}::uuid)
  WHEN ${auditLogs.resourceType} = 'catalog_entry'
    THEN (SELECT c.datasource_name FROM catalog_entries c WHERE c.id = ${auditLogs.resourceId}::uuid)
  END`;

export async function listAuditLogs(db: Db, query: ListAuditLogsQuery) {
  const conditions: SQL[] = [];
  if (query.action_type) conditions.push(textEquals(auditLogs.actionType, query.action_type));
  if (query.actor_email) conditions.push(textEquals(auditLogs.actorEmail, query.actor_email));
  if (query.resource_type) conditions.push(textEquals(auditLogs.resourceType, query.resource_type));
  if (query.resource_id) conditions.push(textEquals(auditLogs.resourceId, query.resource_id));
  if (query.source) conditions.push(textEquals(auditLogs.source, query.source));
  if (query.routine === 'hide') conditions.push(not(inArray(auditLogs.actionType, [...ROUTINE_ACTIONS])));
  const where = conditions.length ? and(...conditions) : undefined;
  const column = query.sort.endsWith('timestamp') ? auditLogs.timestamp : auditLogs.createdAt;
  const direction = query.sort.startsWith('-') ? desc : asc;
  const rows = await db
    .select({ row: auditLogs, name: resourceName })
    .from(auditLogs)
    .where(where)
    .orderBy(direction(column), direction(auditLogs.seq))
    .limit(query.limit)
    .offset(query.offset);
  const [total] = await db.select({ n: count() }).from(auditLogs).where(where);
  return {
    logs: rows.map((r) => toAuditView(r.row, r.name)),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

/** Every action type in the log with its number of records, by name (the console's action picker). */
export async function auditActions(db: Db) {
  const rows = await db
    .select({ action_type: auditLogs.actionType, records: count() })
    .from(auditLogs)
    .groupBy(auditLogs.actionType)
    .orderBy(asc(auditLogs.actionType));
  return { actions: rows.map((r) => ({ action_type: r.action_type, records: Number(r.records) })) };
}
