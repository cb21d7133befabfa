// Data-access requests: create (idempotent with Idempotency-Key), read (owner or admin; anyone else 404), lists, and
// the moves of the state machine (shared/requests/state.ts), each one guarded UPDATE plus its audit record in
// one transaction.
import { createHash } from 'node:crypto';
import { and, asc, count, desc, eq, inArray, lte, max, type SQL, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import type { Principal } from '../core/auth/principal.ts';
import { isAdmin } from '../core/auth/principal.ts';
import { canonicalize } from '../core/canonical-json.ts';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { requests, requestUsageEvents } from '../core/db/schema.ts';
import { textEquals } from '../core/db/sql-values.ts';
import { conflict, forbidden, invalid, invalidField, notFound, unprocessable } from '../core/errors.ts';
import type {
  CreateRequestBody,
  ListRequestsQuery,
  ListUsageEventsQuery,
  RequestView,
  Scope,
  TunnelView,
} from './schemas.ts';
import { canMove, type Move, type RequestStatus, TRANSITIONS } from './state.ts';

export type RequestRow = typeof requests.$inferSelect;
// A usage event as the requests read it (its export position is the exports' own).
type UsageRow = Omit<typeof requestUsageEvents.$inferSelect, 'exportXid'>;

const DAY = 86_400_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (id: string): boolean => UUID.test(id);

export const actorOf = (principal: Principal, ipAddress: string): AuditActor => ({
  id: principal.subject,
  email: principal.email,
  ipAddress,
});

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** A request's usage as its view shows it: the latest events, and the count and time of its executed queries. */
export interface Usage {
  events: UsageRow[];
  queries: number;
  lastQueryAt: Date | null;
}
const NO_USAGE: Usage = { events: [], queries: 0, lastQueryAt: null };

/**
 * The tunnel as shown: a credential's use_count and last_used_at count the queries run through the proxy (its usage
 * events of type `query`) on top of what the provider reported when it made the credential. The proxy writes only
 * the event, so concurrent queries never contend on the request's row.
 */
function tunnelWithUsage(tunnel: TunnelView | null, usage: Usage): TunnelView | null {
  if (!tunnel || tunnel.credentials.length === 0 || usage.queries === 0) return tunnel;
  const [first, ...rest] = tunnel.credentials;
  if (!first) return tunnel;
  const last = usage.lastQueryAt?.toISOString() ?? null;
  return {
    ...tunnel,
    credentials: [
      {
        ...first,
        use_count: first.use_count + usage.queries,
        last_used_at: last && (!first.last_used_at || last > first.last_used_at) ? last : first.last_used_at,
      },
      ...rest,
    ],
  };
}

export function toRequestView(row: RequestRow, usage: Usage = NO_USAGE): RequestView {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    business_justification: row.businessJustification,
    status: row.status as RequestStatus,
    risk_level: row.riskLevel as RequestView['risk_level'],
    source: row.source,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    valid_until: iso(row.validUntil),
    approved_at: iso(row.approvedAt),
    approved_by: row.approvedBy,
    approval_notes: row.approvalNotes,
    denial_reason: row.denialReason,
    external_ticket_id: row.externalTicketId,
    external_ticket_url: row.externalTicketUrl,
    datasource_names: row.datasourceNames,
    environment_id: row.environmentId,
    environment_status: row.environmentStatus,
    request_template: row.requestTemplate ?? null,
    requester: { id: row.requesterId, name: row.requesterName, email: row.requesterEmail },
    scope: row.scope as Scope,
    tunnel: tunnelWithUsage((row.tunnel as TunnelView | null) ?? null, usage),
    usage_events: usage.events.map(usageEventViewOf),
  };
}

/** A usage event as the API returns it. */
export const usageEventViewOf = (u: Omit<UsageRow, 'requestId'>) => ({
  id: u.id,
  action_type: u.actionType,
  ip_address: u.ipAddress ?? '',
  timestamp: u.timestamp.toISOString(),
  metadata: u.metadata,
});

/**
 * GET /v1/requests/{id}/usage-events: every usage event of a request the caller may see (its requester or an admin;
 * else 404), a page at a time, newest first by default. The request's own view shows only the newest
 * `requests.usage_events_in_view`.
 */
export async function listUsageEvents(db: Db, id: string, principal: Principal, query: ListUsageEventsQuery) {
  const row = await requestVisibleTo(db, id, principal);
  const e = requestUsageEvents;
  const where = and(
    eq(e.requestId, row.id),
    query.action_type ? eq(e.actionType, query.action_type) : undefined,
  );
  const order = query.sort === 'timestamp' ? [asc(e.timestamp), asc(e.id)] : [desc(e.timestamp), desc(e.id)];
  const [rows, [total]] = await Promise.all([
    db
      .select({
        id: e.id,
        actionType: e.actionType,
        ipAddress: e.ipAddress,
        timestamp: e.timestamp,
        metadata: e.metadata,
      })
      .from(e)
      .where(where)
      .orderBy(...order)
      .limit(query.limit)
      .offset(query.offset),
    db.select({ n: count() }).from(e).where(where),
  ]);
  return {
    usage_events: rows.map(usageEventViewOf),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

/** The latest `perRequest` usage events of each request, and the count and last time of its executed queries. */
async function usageFor(db: Db, ids: string[], perRequest: number): Promise<Map<string, Usage>> {
  const byRequest = new Map<string, Usage>();
  if (ids.length === 0) return byRequest;
  const e = requestUsageEvents;
  const ranked = db
    .select({
      id: e.id,
      requestId: e.requestId,
      actionType: e.actionType,
      ipAddress: e.ipAddress,
      timestamp: e.timestamp,
      metadata: e.metadata,
      rank: sql<number>`row_number() over (partition by ${e.requestId} order by ${e.timestamp} desc, ${e.id} desc)`.as(
        'rank',
      ),
    })
    .from(e)
    .where(inArray(e.requestId, ids))
    .as('ranked');
  const [events, counts] = await Promise.all([
    perRequest > 0
      ? db
          .select({
            id: ranked.id,
            requestId: ranked.requestId,
            actionType: ranked.actionType,
            ipAddress: ranked.ipAddress,
            timestamp: ranked.timestamp,
            metadata: ranked.metadata,
          })
          .from(ranked)
          .where(lte(ranked.rank, perRequest))
          .orderBy(desc(ranked.timestamp), desc(ranked.id))
      : Promise.resolve([]),
    db
      .select({ requestId: e.requestId, n: count(), last: max(e.timestamp) })
      .from(e)
      .where(and(inArray(e.requestId, ids), eq(e.actionType, 'query')))
      .groupBy(e.requestId),
  ]);
  const entry = (id: string) => {
    let usage = byRequest.get(id);
    if (!usage) {
      usage = { events: [], queries: 0, lastQueryAt: null };
      byRequest.set(id, usage);
    }
    return usage;
  };
  for (const row of events) entry(row.requestId).events.push(row);
  for (const c of counts) {
    const usage = entry(c.requestId);
    usage.queries = Number(c.n);
    usage.lastQueryAt = c.last ? new Date(c.last) : null;
  }
  return byRequest;
}

export async function viewOf(db: Db, row: RequestRow, config: Config): Promise<RequestView> {
  const usage = await usageFor(db, [row.id], config.requests.usage_events_in_view);
  return toRequestView(row, usage.get(row.id));
}

export async function findRequest(db: Db, id: string): Promise<RequestRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await db.select().from(requests).where(eq(requests.id, id)).limit(1);
  return row;
}

/** The request as the caller may see it: the owner or an admin; for anyone else it does not exist (404). */
export async function requestVisibleTo(db: Db, id: string, principal: Principal): Promise<RequestRow> {
  const row = await findRequest(db, id);
  if (!row || (row.requesterId !== principal.subject && !isAdmin(principal))) {
    throw notFound('No request with this id.');
  }
  return row;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** Reads the Idempotency-Key header: absent is fine, present must be 1..200 visible ASCII characters. */
export function idempotencyKeyOf(headers: Record<string, string | undefined>): string | undefined {
  const value = headers['idempotency-key'] ?? headers['Idempotency-Key'];
  if (value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw invalid('invalid_idempotency_key', 'Idempotency-Key must be 1 to 200 visible ASCII characters.');
  }
  return value;
}

export function validUntilOf(body: CreateRequestBody, settings: Config['requests'], now: Date): Date {
  if (!body.valid_until) return new Date(now.getTime() + settings.default_validity);
  const at = new Date(body.valid_until);
  if (at.getTime() <= now.getTime()) {
    throw invalidField('body', ['valid_until'], 'must be in the future');
  }
  if (at.getTime() > now.getTime() + settings.max_validity) {
    throw invalidField(
      'body',
      ['valid_until'],
      `must be at most ${Math.round(settings.max_validity / DAY)} days from now`,
    );
  }
  return at;
}

/** The fingerprint of a create body: SHA-256 of its validated form (defaults applied) as RFC 8785 canonical JSON. */
export const bodyFingerprint = (body: CreateRequestBody): string =>
  createHash('sha256').update(canonicalize(body), 'utf8').digest('hex');

/**
 * A key is a promise that the retry is the same request: reusing it for another body is the client's bug, answered
 * 422 (draft-ietf-httpapi-idempotency-key-header: "Idempotency-Key is already being used for a different request
 * payload") rather than silently returning a request the caller did not send.
 */
const keyReused = () =>
  unprocessable(
    'idempotency_key_reused',
    'This Idempotency-Key was already used for a different request body; use a new key for a new request.',
  );

/**
 * POST /v1/requests: a new pending request and its audit record. With an Idempotency-Key, a retry (same caller, same
 * key, same body) returns the request the first call created — also when the two calls race — and `replayed` is
 * true; the same key with another body is 422 idempotency_key_reused and changes nothing.
 */
export async function createRequest(
  db: Db,
  config: Config,
  body: CreateRequestBody,
  principal: Principal,
  ipAddress: string,
  idempotencyKey?: string,
): Promise<{ request: RequestView; replayed: boolean }> {
  const findByKey = async () => {
    if (!idempotencyKey) return undefined;
    const [row] = await db
      .select()
      .from(requests)
      .where(and(eq(requests.requesterId, principal.subject), eq(requests.idempotencyKey, idempotencyKey)))
      .limit(1);
    return row;
  };
  const fingerprint = idempotencyKey ? bodyFingerprint(body) : null;
  const replay = async (row: RequestRow) => {
    // Rows from before fingerprints were kept (NULL) replay as they always did.
    if (row.idempotencyBodySha256 && row.idempotencyBodySha256 !== fingerprint) throw keyReused();
    return { request: await viewOf(db, row, config), replayed: true };
  };
  const existing = await findByKey();
  if (existing) return replay(existing);

  const now = new Date();
  const validUntil = validUntilOf(body, config.requests, now);
  // Every datasource the scope reads: its datasets' and their joins' sources.
  const datasourceNames = [
    ...new Set(
      body.scope.datasources.flatMap((ds) =>
        ds.datasets.flatMap((d) => [d.source.name, ...d.joins.map((j) => j.source.name)]),
      ),
    ),
  ];
  const inserted = await db.transaction(async (tx) => {
    const [row] = await tx
      .insert(requests)
      .values({
        title: body.title,
        description: body.description,
        businessJustification: body.business_justification,
        status: 'pending',
        riskLevel: body.risk_level,
        source: 'api',
        validUntil,
        externalTicketId: body.external_ticket_id ?? null,
        externalTicketUrl: body.external_ticket_url ?? null,
        datasourceNames,
        requestTemplate: body.request_template ?? null,
        requesterId: principal.subject,
        requesterName: principal.name,
        requesterEmail: principal.email,
        scope: body.scope,
        tunnel: null,
        idempotencyKey: idempotencyKey ?? null,
        idempotencyBodySha256: fingerprint,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) return undefined; // the same key won a race: nothing written here, no audit record
    await recordAudit(tx, {
      actionType: 'request.created',
      actor: actorOf(principal, ipAddress),
      resourceType: 'request',
      resourceId: row.id,
      metadata: { title: row.title, risk_level: row.riskLevel, datasource_names: datasourceNames },
    });
    return row;
  });
  if (inserted) return { request: toRequestView(inserted), replayed: false };
  const winner = await findByKey();
  if (!winner) throw new Error('idempotent create: conflicting row not found');
  return replay(winner);
}

function orderOf(sort: string) {
  const direction = sort.startsWith('-') ? desc : asc;
  return [direction(requests.createdAt), direction(requests.id)];
}

export async function listRequests(db: Db, config: Config, query: ListRequestsQuery) {
  const conditions: SQL[] = [];
  if (query.requester_id !== undefined) conditions.push(eq(requests.requesterId, query.requester_id));
  if (query.status) conditions.push(textEquals(requests.status, query.status));
  if (query.risk_level) conditions.push(textEquals(requests.riskLevel, query.risk_level));
  const where = conditions.length ? and(...conditions) : undefined;
  const rows = await db
    .select()
    .from(requests)
    .where(where)
    .orderBy(...orderOf(query.sort))
    .limit(query.limit)
    .offset(query.offset);
  const [total] = await db.select({ n: count() }).from(requests).where(where);
  const usage = await usageFor(
    db,
    rows.map((r) => r.id),
    config.requests.usage_events_in_view,
  );
  return {
    requests: rows.map((r) => toRequestView(r, usage.get(r.id))),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

export interface MoveOptions {
  /** Extra columns the move sets. */
  set?: Partial<typeof requests.$inferInsert>;
  metadata?: Record<string, unknown>;
  /** Audit source: api for people, env-svc for environment events. */
  source?: 'api' | 'env-svc';
  /** The error for a move the state machine refuses; 409 by default (revoke answers 400, per the spec). */
  refused?: (status: RequestStatus) => Error;
}

/**
 * Applies a move of the state machine: one UPDATE guarded by the allowed source states, and its audit record, in one
 * transaction. A refused move changes nothing and writes no audit record.
 */
export async function moveRequest(
  db: Db,
  id: string,
  move: Move,
  actor: AuditActor,
  options: MoveOptions = {},
): Promise<RequestRow> {
  const transition = TRANSITIONS[move];
  const result = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(requests)
      .set({ ...(options.set ?? {}), status: transition.to, updatedAt: sql`now()` })
      .where(
        and(
          eq(requests.id, id),
          inArray(requests.status, [...transition.from]),
          ...(move === 'approve' ? [sql`${requests.requesterId} <> ${actor.id}`] : []),
        ),
      )
      .returning();
    if (!row) return undefined;
    await recordAudit(tx, {
      actionType: transition.action,
      actor,
      resourceType: 'request',
      resourceId: id,
      source: options.source ?? 'api',
      environmentId: row.environmentId ?? '',
      metadata: { from: transition.from, to: transition.to, ...(options.metadata ?? {}) },
    });
    return row;
  });
  if (result) return result;
  const current = await findRequest(db, id);
  if (!current) throw notFound('No request with this id.');
  const status = current.status as RequestStatus;
  if (move === 'approve' && canMove(move, status) && current.requesterId === actor.id) {
    throw forbidden('An admin cannot approve their own request; another admin has to.');
  }
  if (options.refused) throw options.refused(status);
  throw conflict('invalid_transition', `A request that is ${status} cannot be moved by ${move}.`);
}

export async function approveRequest(
  db: Db,
  id: string,
  notes: string | undefined,
  principal: Principal,
  ipAddress: string,
): Promise<RequestRow> {
  if (!isUuid(id)) throw notFound('No request with this id.');
  return moveRequest(db, id, 'approve', actorOf(principal, ipAddress), {
    set: { approvedAt: new Date(), approvedBy: principal.email, approvalNotes: notes ?? null },
    metadata: notes ? { notes } : {},
    // Its own code: the approve route answers it 404 (its spec lists no Conflict), RouteSpec.statusOf.
    refused: (status) =>
      conflict('request_not_pending', `Only a pending request can be approved; this one is ${status}.`),
  });
}

export async function denyRequest(
  db: Db,
  id: string,
  reason: string,
  principal: Principal,
  ipAddress: string,
): Promise<RequestRow> {
  if (!isUuid(id)) throw notFound('No request with this id.');
  return moveRequest(db, id, 'deny', actorOf(principal, ipAddress), {
    set: { denialReason: reason },
    metadata: { reason },
  });
}

/** Revoke: the requester or an admin (anyone else: 404); 400 when the request is not approved or active. */
export async function revokeRequest(
  db: Db,
  id: string,
  reason: string | undefined,
  principal: Principal,
  ipAddress: string,
): Promise<RequestRow> {
  await requestVisibleTo(db, id, principal);
  return moveRequest(db, id, 'revoke', actorOf(principal, ipAddress), {
    metadata: reason ? { reason } : {},
    // The revoke route answers it 400 (its spec lists no Conflict), RouteSpec.statusOf.
    refused: (status) =>
      conflict('not_revocable', `Only an approved or active request can be revoked; this one is ${status}.`),
  });
}
