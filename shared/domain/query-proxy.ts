// POST /v1/requests/{id}/query: the requester's SQL against the request's environment. Checks in order: visible to
// the caller (else 404), the caller is the requester (an admin who is not: 403), the request is active (else 409),
// the SQL guard (400), then the provider runs it as the request's credential. Every executed or failed query records
// a usage event (who, when, IP, SHA-256 of the SQL, rows, duration); an executed one also bumps the credential's
// use_count and last_used_at.
import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { Db } from '../db/database.ts';
import { sqlState } from '../db/errors.ts';
import { requests } from '../db/schema.ts';
import { jsonParam, uuidParam } from '../db/sql-values.ts';
import { badRequest, conflict, forbidden, HttpError, notFound } from '../http/errors.ts';
import type { Scope } from '../schemas/requests.ts';
import { environmentNames } from './environments/builtin.ts';
import type { EnvironmentProvider, QueryLimits, QueryResult } from './environments/types.ts';
import { checkStatement, loadSqlParser } from './query-proxy-guard.ts';
import { isUuid, type RequestRow } from './requests.ts';

export const sqlHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

type QueryRow = Pick<RequestRow, 'id' | 'requesterId' | 'status' | 'scope' | 'environmentId'>;

/** Only what the query path needs (the full row, with its usage events, costs more than the query itself). */
async function queryRow(db: Db, id: string, principal: Principal): Promise<QueryRow> {
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
  return new Set(scope.datasources.flatMap((ds) => ds.datasets.map((d) => d.namespace.toLowerCase())));
}

async function recordUsage(
  db: Db,
  row: QueryRow,
  principal: Principal,
  ipAddress: string,
  actionType: 'query' | 'query_failed' | 'query_refused',
  metadata: Record<string, unknown>,
): Promise<void> {
  const at = new Date().toISOString();
  const event = sql`INSERT INTO request_usage_events (request_id, action_type, ip_address, metadata)
    VALUES (${uuidParam(row.id)}, ${actionType}, ${ipAddress}, ${jsonParam({
      actor_id: principal.subject,
      actor_email: principal.email,
      ...metadata,
    })})`;
  if (actionType !== 'query') {
    await db.execute(event);
    return;
  }
  // One statement: the event and the credential's counters, together. Its commit does not wait for the WAL flush
  // (synchronous_commit off for this transaction only): a crash can lose the last fraction of a second of usage
  // events, never corrupt them, and the flush was most of the proxy's overhead (see bench:query).
  await db.execute(sql`WITH cfg AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
    ev AS (${event} RETURNING 1)
    UPDATE requests SET tunnel = jsonb_set(jsonb_set(tunnel, '{credentials,0,use_count}',
        to_jsonb(coalesce((tunnel #>> '{credentials,0,use_count}')::int, 0) + 1)),
        '{credentials,0,last_used_at}', to_jsonb(${at}::text))
    WHERE id = ${uuidParam(row.id)} AND jsonb_array_length(coalesce(tunnel -> 'credentials', '[]'::jsonb)) > 0
      AND EXISTS (SELECT 1 FROM ev) AND EXISTS (SELECT 1 FROM cfg)`);
}

function queryError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const code = sqlState(err);
  const message = (() => {
    for (let e: unknown = err, d = 0; e && d < 6; d++) {
      const c = (e as { code?: unknown }).code;
      if (typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c))
        return String((e as { message?: unknown }).message ?? '');
      e = (e as { cause?: unknown }).cause;
    }
    return '';
  })();
  if (code === '57014')
    return badRequest('query_timeout', 'The statement ran longer than the statement timeout.');
  if (code === '42501' || code === '25006')
    return badRequest('query_refused', `The database refused it: ${message}.`);
  if (code && /^(42|22|21|0A|2B)/.test(code))
    return badRequest('query_failed', `The statement failed: ${message}.`);
  throw err;
}

export async function runQuery(
  db: Db,
  provider: EnvironmentProvider,
  limits: QueryLimits,
  id: string,
  text: string,
  principal: Principal,
  ipAddress: string,
): Promise<QueryResult> {
  const row = await queryRow(db, id, principal);
  if (row.requesterId !== principal.subject) {
    throw forbidden('Only the requester runs queries in a request environment.');
  }
  if (row.status !== 'active') {
    throw conflict(
      'request_not_active',
      `Queries run only while the request is active; this one is ${row.status}.`,
    );
  }
  const hash = sqlHash(text);
  await loadSqlParser();
  let statement: string;
  try {
    statement = checkStatement(text, { schema: environmentNames(row.id).schema, views: viewsOf(row) });
  } catch (err) {
    await recordUsage(db, row, principal, ipAddress, 'query_refused', {
      sql_sha256: hash,
      error: (err as HttpError).code,
    });
    throw err;
  }
  const started = performance.now();
  try {
    const result = await provider.query(row, statement, limits);
    await recordUsage(db, row, principal, ipAddress, 'query', {
      sql_sha256: hash,
      row_count: result.row_count,
      truncated: result.truncated,
      duration_ms: result.duration_ms,
    });
    return result;
  } catch (err) {
    const httpError = queryError(err);
    await recordUsage(db, row, principal, ipAddress, 'query_failed', {
      sql_sha256: hash,
      error: httpError.code,
      duration_ms: Math.round(performance.now() - started),
    });
    throw httpError;
  }
}
