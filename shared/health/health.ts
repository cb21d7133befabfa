import { desc, lt, sql } from 'drizzle-orm';
import type { Config } from '../core/config/schema.ts';
import type { Database } from '../core/db/database.ts';
import { cliSignins, deviceSignatures, healthProbes } from '../core/db/schema.ts';
import { pruneSigninLockouts } from '../identity/lockouts.ts';

export type HealthStatus = 'ok' | 'degraded' | 'unavailable';

export interface DatabaseCheck {
  status: 'ok' | 'unavailable';
  driver: string;
  latency_ms: number | null;
}

/** A live round trip to the database, bounded so a hung connection cannot hold the health check. */
export async function checkDatabase(database: Database, timeoutMs = 3_000): Promise<DatabaseCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      database.db.execute(sql`SELECT 1`),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('database check timed out')), timeoutMs);
      }),
    ]);
    return {
      status: 'ok',
      driver: database.driver,
      latency_ms: Math.round((performance.now() - started) * 100) / 100,
    };
  } catch {
    return { status: 'unavailable', driver: database.driver, latency_ms: null };
  } finally {
    clearTimeout(timer);
  }
}

export async function lastProbe(database: Database) {
  const [row] = await database.db.select().from(healthProbes).orderBy(desc(healthProbes.ranAt)).limit(1);
  if (!row) return null;
  return {
    status: row.status as HealthStatus,
    ran_at: row.ranAt.toISOString(),
    duration_ms: row.durationMs,
    checks: row.checks,
  };
}

export async function healthReport(config: Config, database: Database, startedAt: Date, lambda: boolean) {
  const dbCheck = await checkDatabase(database);
  const probe = dbCheck.status === 'ok' ? await lastProbe(database).catch(() => null) : null;
  const status: HealthStatus =
    dbCheck.status === 'unavailable' ? 'unavailable' : probe && probe.status !== 'ok' ? 'degraded' : 'ok';
  const memory = process.memoryUsage();
  return {
    status,
    version: config.version,
    env: config.env,
    uptime_s: Math.round((Date.now() - startedAt.getTime()) / 1000),
    runtime: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      lambda,
    },
    memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed },
    database: dbCheck,
    cli_signin: config.dashboard_url ? ('enabled' as const) : ('disabled' as const),
    last_probe: probe,
  };
}

export interface ProbeCheck {
  name: string;
  run: () => Promise<Record<string, unknown>>;
}

/**
 * The background probe: checks the database (and any extra dependency, e.g. the environment service), stores the
 * result, and prunes what has expired (replay records, stale sign-ins, sign-in failures past their window and not locked, probe
 * history beyond 7 days). It touches the
 * database on purpose: on Aurora with min capacity 0 that wakes the cluster each probe_interval (docs/operations.md, Waking from zero).
 */
export async function runHealthProbe(database: Database, extraChecks: ProbeCheck[] = []) {
  const started = performance.now();
  const checks: Record<string, unknown> = {};
  const dbCheck = await checkDatabase(database, 10_000);
  checks.database = dbCheck;
  let status: HealthStatus = dbCheck.status === 'ok' ? 'ok' : 'unavailable';
  for (const check of extraChecks) {
    try {
      checks[check.name] = { status: 'ok', ...(await check.run()) };
    } catch (err) {
      checks[check.name] = { status: 'unavailable', error: (err as Error).message };
      if (status === 'ok') status = 'degraded';
    }
  }
  const durationMs = Math.round(performance.now() - started);
  if (dbCheck.status === 'ok') {
    const now = new Date();
    await database.db.insert(healthProbes).values({ status, durationMs, checks, ranAt: now });
    await database.db.delete(deviceSignatures).where(lt(deviceSignatures.expiresAt, now));
    await database.db.delete(cliSignins).where(lt(cliSignins.expiresAt, now));
    await pruneSigninLockouts(database.db, now);
    await database.db
      .delete(healthProbes)
      .where(lt(healthProbes.ranAt, new Date(now.getTime() - 7 * 86_400_000)));
  }
  return { status, duration_ms: durationMs, checks };
}
