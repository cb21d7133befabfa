// POST /v1/requests/{id}/query: the requester's SQL against the request's environment. Checks in order: visible to
// the caller (else 404), the caller is the requester (an admin who is not: 404 too, with a message that says so; the
// spec lists no 403 for this route), the request is active (else 409),
// the SQL guard (400), then the provider runs it as the request's credential. Every executed or failed query records
// a usage event (who, when, IP, SHA-256 of the SQL, rows, duration); the credential's use_count and last_used_at are
// read from those events (shared/requests/requests.ts), so a query writes one row and never rewrites the request.
//
// Round trips: the request's requester and scope never change after it is created, so they are kept in a small
// per-process cache; its status does change, and the builtin provider checks it in the very transaction that runs
// the statement (a revoke is effective for the next query, on every instance). Providers that cannot (http) get a
// fresh read of the request every time. The statement itself runs in one pipelined round trip on PostgreSQL (see
// shared/requests/environments/builtin/session-postgres.ts), and the usage event is one INSERT, prepared once per connection. It is
// written before the answer is returned: a query whose use cannot be recorded fails (503) and its rows are not sent.
import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { isAdmin, type Principal } from '../../core/auth/principal.ts';
import type { Database, Db } from '../../core/db/database.ts';
import { requests } from '../../core/db/schema.ts';
import { jsonParam, uuidParam } from '../../core/db/sql-values.ts';
import { conflict, invalid, notFound, ServiceError } from '../../core/errors.ts';
import { rawExecutor } from '../environments/builtin/drivers.ts';
import { isRowTooLarge } from '../environments/builtin/results.ts';
import { databaseError } from '../environments/builtin/session.ts';
import { environmentNames, viewName } from '../environments/builtin/view-sql.ts';
import {
  EnvironmentInactiveError,
  type EnvironmentQuerier,
  type QueryLimits,
  type QueryResult,
  type QueryTarget,
} from '../environments/types.ts';
import { isUuid, type RequestRow } from '../requests.ts';
import type { Scope, UsageAction } from '../schemas.ts';
import { type CheckedStatement, checkStatement, loadSqlParser } from './guard.ts';

export const sqlHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** What the query path needs of a request; everything but `status` is fixed once the request is active. */
export type QueryRow = Pick<RequestRow, 'id' | 'requesterId' | 'status' | 'scope' | 'environmentId'>;

interface Fixed {
  requesterId: string;
  environmentId: string | null;
  views: Set<string>;
}
/** Requester, environment and views of active requests (immutable from then on), per process, bounded. */
const fixedParts = new Map<string, Fixed>();
const FIXED_PARTS_MAX = 1000;

function remember(row: QueryRow): Fixed {
  const fixed = { requesterId: row.requesterId, environmentId: row.environmentId, views: viewsOf(row) };
  if (row.status !== 'active') return fixed;
  if (fixedParts.size >= FIXED_PARTS_MAX) fixedParts.delete(fixedParts.keys().next().value as string);
  fixedParts.set(row.id, fixed);
  return fixed;
}

/** Only what the query path needs (the full row, with its usage events, costs more than the query itself). */
export async function queryRow(db: Db, id: string, principal: Principal): Promise<QueryRow> {
  const [row] = isUuid(id)
    ? await db
        .select({
          id: requests.id,
          requesterId: requests.requesterId,
          status: requests.status,
          scope: requests.scope,
          environmentId: requests.environmentId,
        })
        .from(requests)
        .where(eq(requests.id, id))
        .limit(1)
    : [];
  if (!row || (row.requesterId !== principal.subject && !isAdmin(principal))) {
    throw notFound('No request with this id.');
  }
  return row;
}

export function viewsOf(row: Pick<RequestRow, 'scope'>): Set<string> {
  const scope = row.scope as Scope;
  return new Set(scope.datasources.flatMap((ds) => ds.datasets.map(viewName)));
}

const notActive = (status: string) =>
  conflict('request_not_active', `Queries run only while the request is active; this one is ${status}.`);

/**
 * The caller must be the requester. Anyone else who is not an admin does not see the request at all; an admin sees
 * it, but has no query environment in it: 404 as well (the spec lists no 403 here), saying where an admin reads it.
 */
function checkCaller(id: string, requesterId: string, principal: Principal): void {
  if (requesterId === principal.subject) return;
  if (!isAdmin(principal)) throw notFound('No request with this id.');
  throw notFound(
    `Only the requester of request ${id} can query it; admins read it at GET /v1/admin/requests/${id}.`,
  );
}

// Its commit does not wait for the WAL flush (synchronous_commit off for this transaction only): a crash can lose the
// last fraction of a second of usage events, never corrupt them; the flush was most of the write's cost.
const USAGE_INSERT = `WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v)
  INSERT INTO request_usage_events (request_id, action_type, ip_address, metadata)`;

/** Records one usage event of a request (the proxy's only write per query). */
export async function recordUsage(
  database: Database,
  requestId: string,
  principal: Principal,
  ipAddress: string,
  actionType: UsageAction,
  metadata: Record<string, unknown>,
): Promise<void> {
  const meta = { actor_id: principal.subject, actor_email: principal.email, ...metadata };
  const raw = rawExecutor(database);
  if (raw) {
    await raw('acp_usage_event', `${USAGE_INSERT} SELECT $1::uuid, $2::text, $3::text, $4::jsonb FROM cfg`, [
      requestId,
      actionType,
      ipAddress,
      JSON.stringify(meta),
    ]);
    return;
  }
  await database.db.execute(
    sql`${sql.raw(USAGE_INSERT)} SELECT ${uuidParam(requestId)}, ${actionType}, ${ipAddress}, ${jsonParam(meta)} FROM cfg`,
  );
}

/** The Data API refuses answers over 1 MiB (BadRequestException, no SQLSTATE). */
const RESPONSE_SIZE = /more than the allowed response size limit/i;

const causes = (err: unknown): unknown[] => {
  const out: unknown[] = [];
  for (let e: unknown = err, d = 0; e && d < 6; d++, e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
};

function queryError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (isRowTooLarge(err)) {
    return invalid(
      'result_row_too_large',
      'A row of the result is larger than query.max_bytes; select fewer or narrower columns.',
    );
  }
  const { code, message } = databaseError(err);
  if (!code && causes(err).some((e) => RESPONSE_SIZE.test(String((e as Error).message ?? '')))) {
    return invalid('result_too_large', 'The result is too large to return; select fewer rows or columns.');
  }
  if (code === '57014')
    return invalid('query_timeout', 'The statement ran longer than the statement timeout.');
  if (code === '42501' || code === '25006')
    return invalid('query_refused', `The database refused it: ${message}.`);
  if (code && /^(42|22|21|0A|2B|54)/.test(code))
    return invalid('query_failed', `The statement failed: ${message}.`);
  throw err;
}

export async function runQuery(
  database: Database,
  provider: EnvironmentQuerier,
  limits: QueryLimits,
  id: string,
  text: string,
  principal: Principal,
  ipAddress: string,
): Promise<QueryResult> {
  const db = database.db;
  let fixed = provider.checksActive ? fixedParts.get(id) : undefined;
  const cached = fixed !== undefined;
  if (fixed) {
    checkCaller(id, fixed.requesterId, principal);
  } else {
    const row = await queryRow(db, id, principal);
    checkCaller(id, row.requesterId, principal);
    if (row.status !== 'active') throw notActive(row.status);
    fixed = remember(row);
  }
  const target: QueryTarget = { id, environmentId: fixed.environmentId };
  const hash = sqlHash(text);
  await loadSqlParser();
  let statement: CheckedStatement;
  try {
    statement = checkStatement(text, {
      schema: environmentNames(id).schema,
      views: fixed.views,
      withoutTimeout: provider.withoutTimeout,
    });
  } catch (err) {
    if (cached) {
      // The status was not read on this path; a request that is no longer active answers 409 first.
      const row = await queryRow(db, id, principal);
      if (row.status !== 'active') throw notActive(row.status);
    }
    await recordUsage(database, id, principal, ipAddress, 'query_refused', {
      sql_sha256: hash,
      error: (err as ServiceError).code,
    });
    throw err;
  }
  const started = performance.now();
  try {
    const result = await provider.query(target, statement, limits);
    await recordUsage(database, id, principal, ipAddress, 'query', {
      sql_sha256: hash,
      row_count: result.row_count,
      truncated: result.truncated,
      duration_ms: result.duration_ms,
    });
    return result;
  } catch (err) {
    if (err instanceof EnvironmentInactiveError) {
      // Revoked or expired since it was read: nothing ran. Answer from a fresh read of the request.
      const row = await queryRow(db, id, principal);
      throw notActive(row.status === 'active' ? 'not ready' : row.status);
    }
    const httpError = queryError(err);
    await recordUsage(database, id, principal, ipAddress, 'query_failed', {
      sql_sha256: hash,
      error: httpError.code,
      duration_ms: Math.round(performance.now() - started),
    });
    throw httpError;
  }
}
