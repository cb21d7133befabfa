// The builtin environment provider: inside the service's own PostgreSQL, a schema per request holding one view per
// dataset and a role per request that may read those views and nothing else (their SQL: view-sql.ts). Sources resolve
// through the catalog: a dataset's {source.name, source.table} must match a catalog entry whose target_location names
// the real `schema.table`, so an approved scope can reach only what the catalog exposes. Teardown drops the schema and
// the role. Every provision and teardown is audited with source env-svc in the transaction of its DDL.
//
// A sweep (at start and on the expiry schedule) drops what a lost teardown left: every environment of this database
// whose request is no longer approved or active, and the roles of databases dropped while their requests were live.
//
// Queries run as the request's role through the session of the database's driver (drivers.ts, session.ts), which
// re-checks that the request is active in the transaction that runs the statement; the result is capped in rows and
// bytes (results.ts).
import { and, eq, sql } from 'drizzle-orm';
import { recordAudit } from '../../../audit/audit.ts';
import type { Database, Db } from '../../../core/db/database.ts';
import { col, queryRows } from '../../../core/db/query.ts';
import { catalogEntries } from '../../../core/db/schema.ts';
import type { CheckedStatement } from '../../query/guard.ts';
import type { RequestRow } from '../../requests.ts';
import type { Dataset, Scope, TunnelView } from '../../schemas.ts';
import type {
  EnvironmentProvider,
  EnvironmentQuerier,
  Provisioned,
  QueryLimits,
  QueryResult,
  QueryTarget,
} from '../types.ts';
import { roleSessionFor } from './drivers.ts';
import { cappedStatement, capRows, DATA_API_RESULT_BUDGET, windowedStatement } from './results.ts';
import type { RawResult, SessionOptions } from './session.ts';
import { PGLITE_MAX_PLAN_COST } from './session-pglite.ts';
import {
  analyzeSql,
  createEnvironmentSql,
  datasetViewSql,
  dropEnvironmentSql,
  dropRoleSql,
  environmentNames,
  orphanRolesSql,
  quoteIdent,
  type ResolveTable,
  requestIdOf,
  staleEnvironmentsSql,
} from './view-sql.ts';

export const ENV_ACTOR = { id: 'env-svc', email: 'env-svc@builtin', ipAddress: '' };

/** Schemas no request may read from, whatever the catalog says. */
const FORBIDDEN_SCHEMAS = new Set(['public', 'pg_catalog', 'information_schema', 'pg_toast']);

function catalogResolver(db: Db): ResolveTable {
  return async (source) => {
    if (!source.table) throw new Error(`source ${source.name} names no table`);
    const [entry] = await db
      .select({ location: catalogEntries.targetLocation })
      .from(catalogEntries)
      .where(and(eq(catalogEntries.datasourceName, source.name), eq(catalogEntries.targetName, source.table)))
      .limit(1);
    if (!entry) throw new Error(`no catalog entry for ${source.name}.${source.table}`);
    const m = /^([A-Za-z_][A-Za-z0-9_]{0,62})\.([A-Za-z_][A-Za-z0-9_]{0,62})$/.exec(entry.location);
    if (!m) throw new Error(`catalog entry ${source.name}.${source.table} has no schema.table location`);
    const [, schema = '', table = ''] = m;
    if (FORBIDDEN_SCHEMAS.has(schema.toLowerCase()) || /^(req_|pg_)/i.test(schema)) {
      throw new Error(
        `catalog entry ${source.name}.${source.table} points into a schema requests may not read`,
      );
    }
    return `${quoteIdent(schema)}.${quoteIdent(table)}`;
  };
}

const datasetsOf = (scope: Scope): Dataset[] => scope.datasources.flatMap((ds) => ds.datasets);

/** The audit record of a provisioning or a teardown, in the transaction of its DDL (source env-svc). */
function auditEnvironment(
  tx: Db,
  actionType: 'environment.provisioned' | 'environment.torn_down',
  request: Pick<RequestRow, 'id'>,
  schema: string,
  metadata: Record<string, unknown>,
) {
  return recordAudit(tx, {
    actionType,
    actor: ENV_ACTOR,
    resourceType: 'request',
    resourceId: request.id,
    source: 'env-svc',
    environmentId: schema,
    environmentName: schema,
    appName: 'builtin',
    metadata,
  });
}

export function createBuiltinProvider(database: Database): EnvironmentProvider {
  const db = database.db;
  return {
    ...createBuiltinQuerier(database),
    async provision(request: RequestRow): Promise<Provisioned> {
      const { schema, role } = environmentNames(request.id);
      const resolveInCatalog = catalogResolver(db);
      const sources = new Set<string>();
      const resolve: ResolveTable = async (source) => {
        const table = await resolveInCatalog(source);
        sources.add(table);
        return table;
      };
      const views: string[] = [];
      for (const d of datasetsOf(request.scope as Scope))
        views.push(await datasetViewSql(schema, d, resolve));
      const now = new Date().toISOString();
      if (database.driver === 'pglite') {
        // PGlite has no autovacuum, so nothing keeps statistics; the plan-cost check before a query is only as
        // good as the planner's estimates. (A cheap ANALYZE of the sources the views read.)
        for (const table of sources) await db.execute(sql.raw(analyzeSql(table)));
      }
      await db.transaction(async (tx) => {
        // Idempotent: a retry after a failure starts from nothing.
        for (const statement of [
          ...dropEnvironmentSql({ schema, role }),
          ...createEnvironmentSql({ schema, role }, views),
        ]) {
          await tx.execute(sql.raw(statement));
        }
        await auditEnvironment(tx, 'environment.provisioned', request, schema, {
          role,
          views: datasetsOf(request.scope as Scope).map((d) => d.namespace),
        });
      });
      const tunnel: TunnelView = {
        id: schema,
        provider: 'builtin',
        sidecar_name: '',
        status: 'ready',
        last_error: '',
        api_url: `/v1/requests/${request.id}/query`,
        edge_url: '',
        explorer_url: '',
        public_url: '',
        created_at: now,
        updated_at: now,
        credentials: [
          {
            id: role,
            type: 'database_role',
            username: role,
            secret_preview: '',
            is_active: true,
            use_count: 0,
            last_used_at: null,
          },
        ],
      };
      return { environmentId: schema, tunnel };
    },
    async teardown(request: RequestRow): Promise<void> {
      await dropEnvironment(db, request, {});
    },
    async sweep(): Promise<string[]> {
      const swept: string[] = [];
      const stale = await queryRows(db, sql.raw(staleEnvironmentsSql), { hex: col.text });
      for (const { hex } of stale) {
        const id = requestIdOf({ schema: `req_${hex}`, role: '' });
        try {
          await dropEnvironment(db, { id }, { swept: true });
          swept.push(id);
        } catch {
          // A teardown of the same environment racing this one; whatever is left, the next sweep finds.
        }
      }
      for (const { rolname } of await queryRows(db, sql.raw(orphanRolesSql), { rolname: col.text })) {
        // Another database's service may have made it (and only its maker may drop it): left to that one.
        await db.execute(sql.raw(dropRoleSql(rolname))).catch(() => {});
      }
      return swept;
    },
  };
}

/** Drops a request's schema and role, audited in the same transaction (source env-svc). */
async function dropEnvironment(db: Db, request: Pick<RequestRow, 'id'>, metadata: Record<string, unknown>) {
  const { schema, role } = environmentNames(request.id);
  await db.transaction(async (tx) => {
    for (const statement of dropEnvironmentSql({ schema, role })) await tx.execute(sql.raw(statement));
    await auditEnvironment(tx, 'environment.torn_down', request, schema, { role, ...metadata });
  });
}

/**
 * The builtin provider's query side alone: what the query function builds, so that its bundle leaves out the
 * provisioning (views, roles, catalog lookups) of createBuiltinProvider.
 */
export function createBuiltinQuerier(database: Database): EnvironmentQuerier {
  const session = roleSessionFor(database);
  return {
    name: 'builtin',
    checksActive: true,
    withoutTimeout: database.driver === 'pglite',
    async query(
      request: QueryTarget,
      statement: CheckedStatement,
      limits: QueryLimits,
    ): Promise<QueryResult> {
      const { schema, role } = environmentNames(request.id);
      const started = performance.now();
      const options: SessionOptions = {
        role,
        schema,
        timeoutMs: limits.statementTimeoutMs,
        requestId: request.id,
      };
      let raw: RawResult;
      if (database.driver === 'data-api') {
        const budget = Math.min(limits.maxBytes, DATA_API_RESULT_BUDGET);
        raw = await session(windowedStatement(statement.text, limits, budget), options);
        // The last column is the number of rows there were; fewer came back when the byte budget ran out.
        const total = Number(raw.rows[0]?.at(-1) ?? 0);
        raw = {
          columns: raw.columns.slice(0, -1),
          rows: raw.rows.map((r) => r.slice(0, -1)),
          truncated: raw.rows.length < total,
        };
      } else {
        raw = await session(cappedStatement(statement.text, limits), {
          ...options,
          keep: { maxRows: limits.maxRows, maxBytes: limits.maxBytes },
          ...(database.driver === 'pglite' && statement.combines
            ? { maxPlanCost: PGLITE_MAX_PLAN_COST }
            : {}),
        });
      }
      const { rows, truncated } = capRows(
        raw.rows,
        limits,
        raw.columns.map((c) => c.type),
      );
      return {
        columns: raw.columns,
        rows,
        row_count: rows.length,
        truncated: truncated || raw.truncated,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
      };
    },
  };
}
