// What happens around the moves of the state machine: provisioning after approval (approved → active, or a visible
// failure an admin can retry), teardown after revoke and expiry, the expiry the scheduled function runs, and the
// sweep of environments whose teardown was lost.
import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import type { Principal } from '../core/auth/principal.ts';
import type { Db } from '../core/db/database.ts';
import { requests } from '../core/db/schema.ts';
import { conflict, ServiceError } from '../core/errors.ts';
import { ENV_ACTOR } from './environments/builtin/provider.ts';
import type { EnvironmentProvider } from './environments/types.ts';
import { actorOf, findRequest, moveRequest, type RequestRow, requestVisibleTo } from './requests.ts';
import type { TunnelView } from './schemas.ts';

export const SYSTEM_ACTOR: AuditActor = { id: 'system', email: 'system', ipAddress: '' };

/** A message for last_error: the driver's own message (drizzle's wrapper carries the statement text). */
export function errorMessage(err: unknown): string {
  if (err instanceof ServiceError) return err.message;
  let e: unknown = err;
  let message = 'provisioning failed';
  for (let depth = 0; e && depth < 6; depth++) {
    const m = (e as { message?: unknown }).message;
    if (typeof m === 'string' && m) message = m;
    e = (e as { cause?: unknown }).cause;
  }
  return message.replace(/\s+/g, ' ').slice(0, 500);
}

function failedTunnel(row: RequestRow, provider: string, lastError: string): TunnelView {
  const now = new Date().toISOString();
  const prev = (row.tunnel as TunnelView | null) ?? null;
  return {
    id: prev?.id ?? '',
    provider,
    sidecar_name: prev?.sidecar_name ?? '',
    status: 'failed',
    last_error: lastError,
    api_url: prev?.api_url ?? '',
    edge_url: prev?.edge_url ?? '',
    explorer_url: prev?.explorer_url ?? '',
    public_url: prev?.public_url ?? '',
    created_at: prev?.created_at ?? now,
    updated_at: now,
    credentials: prev?.credentials ?? [],
  };
}

/**
 * Provisions the environment of an approved request. Success moves it to active (audited, source env-svc). Failure
 * leaves it approved with environment_status = failed and tunnel.last_error set (audited, level error) and rethrows,
 * so that an explicit retry answers with the provider's status (502/503).
 */
export async function provisionEnvironment(
  db: Db,
  provider: EnvironmentProvider,
  row: RequestRow,
): Promise<RequestRow> {
  try {
    const { environmentId, tunnel } = await provider.provision(row);
    try {
      return await moveRequest(db, row.id, 'activate', ENV_ACTOR, {
        source: 'env-svc',
        set: {
          environmentId,
          environmentStatus: 'ready',
          tunnel,
        },
        metadata: { environment_id: environmentId, provider: provider.name },
      });
    } catch (err) {
      // Revoked or expired while provisioning: what was just built must not outlive it.
      await provider.teardown({ ...row, environmentId }).catch(() => {});
      throw err;
    }
  } catch (err) {
    if (err instanceof ServiceError && err.kind === 'conflict') throw err;
    const lastError = errorMessage(err);
    await db.transaction(async (tx) => {
      const [updated] = await tx
        .update(requests)
        .set({
          environmentStatus: 'failed',
          tunnel: failedTunnel(row, provider.name, lastError),
          updatedAt: sql`now()`,
        })
        .where(and(eq(requests.id, row.id), eq(requests.status, 'approved')))
        .returning({ id: requests.id });
      if (!updated) return;
      await recordAudit(tx, {
        actionType: 'environment.provision_failed',
        actor: ENV_ACTOR,
        resourceType: 'request',
        resourceId: row.id,
        source: 'env-svc',
        level: 'error',
        appName: provider.name,
        metadata: { error: lastError },
      });
    });
    throw err;
  }
}

/** After approval: provision, and report a failure through the record rather than the approve response. */
export async function provisionAfterApproval(
  db: Db,
  provider: EnvironmentProvider,
  approved: RequestRow,
): Promise<RequestRow> {
  try {
    return await provisionEnvironment(db, provider, approved);
  } catch {
    return (await findRequest(db, approved.id)) ?? approved;
  }
}

/** POST /v1/admin/requests/{id}/provision: retry a failed provisioning (409 unless approved and failed). */
export async function retryProvisioning(
  db: Db,
  provider: EnvironmentProvider,
  id: string,
  principal: Principal,
  ipAddress: string,
): Promise<RequestRow> {
  const row = await requestVisibleTo(db, id, principal);
  if (row.status !== 'approved' || row.environmentStatus !== 'failed') {
    throw conflict(
      'invalid_transition',
      `Provisioning can be retried for an approved request whose environment failed; this one is ${row.status}${
        row.environmentStatus ? ` (environment ${row.environmentStatus})` : ''
      }.`,
    );
  }
  await recordAudit(db, {
    actionType: 'environment.provision_retried',
    actor: actorOf(principal, ipAddress),
    resourceType: 'request',
    resourceId: id,
  });
  try {
    return await provisionEnvironment(db, provider, row);
  } catch (err) {
    // The provider's own failures (502/503) answer as such; others are in the record (environment_status, last_error).
    if (err instanceof ServiceError) throw err;
    return (await findRequest(db, id)) ?? row;
  }
}

/** Tears the environment down after revoke or expiry; a failure is recorded (teardown_failed) and retried by the sweep. */
export async function teardownEnvironment(
  db: Db,
  provider: EnvironmentProvider,
  row: RequestRow,
): Promise<RequestRow> {
  if (!row.environmentId) return row;
  let status: 'torn_down' | 'teardown_failed' = 'torn_down';
  let lastError = '';
  try {
    await provider.teardown(row);
  } catch (err) {
    status = 'teardown_failed';
    lastError = errorMessage(err);
  }
  return recordTeardown(db, provider, row, status, lastError);
}

/** The request's record after a teardown: its environment status, its tunnel's credentials inactive. */
function recordTeardown(
  db: Db,
  provider: EnvironmentProvider,
  row: RequestRow,
  status: 'torn_down' | 'teardown_failed',
  lastError: string,
): Promise<RequestRow> {
  const prev = (row.tunnel as TunnelView | null) ?? null;
  const tunnel: TunnelView | null = prev
    ? {
        ...prev,
        status,
        last_error: lastError,
        updated_at: new Date().toISOString(),
        credentials: prev.credentials.map((c) => ({ ...c, is_active: false })),
      }
    : null;
  return db.transaction(async (tx) => {
    const [updated] = await tx
      .update(requests)
      .set({
        environmentStatus: status,
        tunnel,
        updatedAt: sql`now()`,
      })
      .where(eq(requests.id, row.id))
      .returning();
    if (status === 'teardown_failed') {
      await recordAudit(tx, {
        actionType: 'environment.teardown_failed',
        actor: ENV_ACTOR,
        resourceType: 'request',
        resourceId: row.id,
        source: 'env-svc',
        level: 'error',
        appName: provider.name,
        metadata: { error: lastError },
      });
    }
    return updated ?? row;
  });
}

/**
 * The scheduled expiry: every approved or active request past valid_until becomes expired (one guarded move each,
 * audited) and its environment is torn down; teardowns that failed earlier are retried.
 */
export async function expireDueRequests(
  db: Db,
  provider: EnvironmentProvider,
  now: Date = new Date(),
): Promise<{ expired: string[]; torn_down: string[]; swept: string[] }> {
  const due = await db
    .select({ id: requests.id })
    .from(requests)
    .where(and(inArray(requests.status, ['approved', 'active']), lte(requests.validUntil, now)))
    .limit(500);
  const expired: string[] = [];
  const tornDown: string[] = [];
  for (const { id } of due) {
    let row: RequestRow;
    try {
      row = await moveRequest(db, id, 'expire', SYSTEM_ACTOR, { metadata: { reason: 'valid_until passed' } });
    } catch (err) {
      if (err instanceof ServiceError && (err.kind === 'conflict' || err.kind === 'not_found')) continue; // moved meanwhile
      throw err;
    }
    expired.push(id);
    const after = await teardownEnvironment(db, provider, row);
    if (after.environmentStatus === 'torn_down') tornDown.push(id);
  }
  const stuck = await db
    .select()
    .from(requests)
    .where(
      and(
        inArray(requests.status, ['revoked', 'expired']),
        eq(requests.environmentStatus, 'teardown_failed'),
      ),
    )
    .limit(100);
  for (const row of stuck) {
    const after = await teardownEnvironment(db, provider, row);
    if (after.environmentStatus === 'torn_down') tornDown.push(row.id);
  }
  return { expired, torn_down: tornDown, swept: await sweepEnvironments(db, provider) };
}

/**
 * Drops every environment whose request is no longer approved or active (provider.sweep) and marks its record torn
 * down: what a teardown lost to a crash (between the request's move and its teardown) left behind. Run at start and
 * by the expiry schedule. Returns the request ids swept.
 */
export async function sweepEnvironments(db: Db, provider: EnvironmentProvider): Promise<string[]> {
  const swept = (await provider.sweep?.()) ?? [];
  for (const id of swept) {
    const row = await findRequest(db, id);
    if (row?.environmentId && row.environmentStatus !== 'torn_down')
      await recordTeardown(db, provider, row, 'torn_down', '');
  }
  return swept;
}
