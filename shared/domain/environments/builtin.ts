// The builtin environment provider: inside the service's own PostgreSQL, a schema per request holding one view per
// dataset (only the allowed columns, only the rows its filter groups allow, only its declared joins), and a role per
// request that may read those views and nothing else. Sources resolve through the catalog: a dataset's
// {source.name, source.table} must match a catalog entry whose target_location names the real `schema.table`, so an
// approved scope can reach only what the catalog exposes. Teardown drops the schema and the role. Every provision and
// teardown is audited with source env-svc in the transaction of its DDL.
import { and, eq, sql } from 'drizzle-orm';
import type { Database, Db } from '../../db/database.ts';
import { catalogEntries } from '../../db/schema.ts';
import type { Dataset, FilterCondition, FilterGroup, Scope, TunnelView } from '../../schemas/requests.ts';
import { COLUMN, JOIN_ON } from '../../schemas/requests.ts';
import { recordAudit } from '../audit.ts';
import type { RequestRow } from '../requests.ts';
import type { EnvironmentProvider, Provisioned, QueryLimits, QueryResult, QueryTarget } from './types.ts';

export const ENV_ACTOR = { id: 'env-svc', email: 'env-svc@builtin', ipAddress: '' };

/** Schemas no request may read from, whatever the catalog says. */
const FORBIDDEN_SCHEMAS = new Set(['public', 'pg_catalog', 'information_schema', 'pg_toast']);

export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export function quoteLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('filter value is not a finite number');
    return String(value);
  }
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new Error('filter value contains a NUL character');
    // standard_conforming_strings is on (the default since 9.1): only the quote needs doubling.
    return `'${value.replace(/'/g, "''")}'`;
  }
  throw new Error('filter value must be a string, number, boolean or null');
}

/** The schema and role of a request's environment. */
export function environmentNames(requestId: string) {
  const hex = requestId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error('request id is not a UUID');
  return { schema: `req_${hex}`, role: `req_${hex}_reader` };
}

const OPS: Record<FilterCondition['op'], string> = {
  eq: '=',
  neq: '<>',
  lt: '<',
  lte: '<=',
  gt: '>',
  gte: '>=',
  in: 'IN',
  not_in: 'NOT IN',
  like: 'LIKE',
  ilike: 'ILIKE',
  is_null: 'IS NULL',
  is_not_null: 'IS NOT NULL',
};

type Aliases = Map<string, string>;

function columnRef(column: string, aliases: Aliases): string {
  const m = COLUMN.exec(column);
  if (!m) throw new Error(`bad column ${column}`);
  const [, qualifier, name] = m as unknown as [string, string | undefined, string];
  const alias = qualifier ? aliases.get(qualifier.toLowerCase()) : 't0';
  if (!alias) throw new Error(`column ${column} names no declared join`);
  return `${alias}.${quoteIdent(name)}`;
}

function conditionSql(c: FilterCondition, aliases: Aliases): string {
  const col = columnRef(c.column, aliases);
  switch (c.op) {
    case 'is_null':
    case 'is_not_null':
      return `${col} ${OPS[c.op]}`;
    case 'in':
    case 'not_in': {
      const list = c.value as unknown[];
      if (list.length === 0) return c.op === 'in' ? 'FALSE' : 'TRUE';
      return `${col} ${OPS[c.op]} (${list.map(quoteLiteral).join(', ')})`;
    }
    default:
      return `${col} ${OPS[c.op]} ${quoteLiteral(c.value)}`;
  }
}

export function filterSql(group: FilterGroup, aliases: Aliases, depth = 0): string {
  if (depth > 10) throw new Error('filter groups nest deeper than 10');
  const parts = group.conditions.map((item) =>
    'condition' in item ? conditionSql(item.condition, aliases) : filterSql(item.group, aliases, depth + 1),
  );
  if (parts.length === 0) return 'TRUE';
  return `(${parts.join(group.logic === 'or' ? ' OR ' : ' AND ')})`;
}

export type ResolveTable = (source: { name: string; table?: string | undefined }) => Promise<string>;

/** The CREATE VIEW of one dataset, with every name quoted and every value a quoted literal. */
export async function datasetViewSql(schema: string, d: Dataset, resolve: ResolveTable): Promise<string> {
  const aliases: Aliases = new Map();
  aliases.set(d.namespace.toLowerCase(), 't0');
  if (d.source.table) aliases.set(d.source.table.toLowerCase(), 't0');
  const from = [`${await resolve(d.source)} AS t0`];
  for (const [i, j] of d.joins.entries()) {
    const alias = `t${i + 1}`;
    aliases.set(j.namespace.toLowerCase(), alias);
    if (j.source.table && !aliases.has(j.source.table.toLowerCase())) {
      aliases.set(j.source.table.toLowerCase(), alias);
    }
    const m = JOIN_ON.exec(j.on);
    if (!m) throw new Error(`join ${j.namespace}: bad on`);
    const [, q1, c1, q2, c2] = m as unknown as [
      string,
      string,
      string | undefined,
      string,
      string | undefined,
    ];
    // `a.x = b.y` or `x = y` (left: the dataset, right: the join).
    const left = c1 === undefined ? `t0.${quoteIdent(q1)}` : columnRef(`${q1}.${c1}`, aliases);
    const right = c2 === undefined ? `${alias}.${quoteIdent(q2)}` : columnRef(`${q2}.${c2}`, aliases);
    from.push(
      `${j.type === 'left' ? 'LEFT JOIN' : 'JOIN'} ${await resolve(j.source)} AS ${alias} ON ${left} = ${right}`,
    );
  }
  const select = d.columns.map((c) => {
    const m = COLUMN.exec(c) as RegExpExecArray;
    const outName = m[1] ? `${m[1]}_${m[2]}` : (m[2] as string);
    return `${columnRef(c, aliases)} AS ${quoteIdent(outName)}`;
  });
  const where = d.filters ? filterSql(d.filters, aliases) : 'TRUE';
  return `CREATE VIEW ${quoteIdent(schema)}.${quoteIdent(d.namespace)} WITH (security_barrier = true) AS SELECT ${select.join(', ')} FROM ${from.join(' ')} WHERE ${where}`;
}

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
    const [, schema, table] = m as unknown as [string, string, string];
    if (FORBIDDEN_SCHEMAS.has(schema.toLowerCase()) || /^(req_|pg_)/i.test(schema)) {
      throw new Error(
        `catalog entry ${source.name}.${source.table} points into a schema requests may not read`,
      );
    }
    return `${quoteIdent(schema)}.${quoteIdent(table)}`;
  };
}

const datasetsOf = (scope: Scope): Dataset[] => scope.datasources.flatMap((ds) => ds.datasets);

/** Column type names of the OIDs a result commonly carries; anything else is reported by its OID. */
const TYPE_NAMES: Record<number, string> = {
  16: 'bool',
  17: 'bytea',
  20: 'int8',
  21: 'int2',
  23: 'int4',
  25: 'text',
  114: 'json',
  700: 'float4',
  701: 'float8',
  1043: 'varchar',
  1082: 'date',
  1114: 'timestamp',
  1184: 'timestamptz',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
};

export function normalizeValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** Caps a result at maxRows rows and maxBytes bytes of JSON. */
export function capRows(rows: unknown[][], limits: QueryLimits): { rows: unknown[][]; truncated: boolean } {
  const out: unknown[][] = [];
  let bytes = 2;
  for (const row of rows) {
    if (out.length >= limits.maxRows) return { rows: out, truncated: true };
    const normalized = row.map(normalizeValue);
    bytes += Buffer.byteLength(JSON.stringify(normalized)) + 1;
    if (bytes > limits.maxBytes) return { rows: out, truncated: true };
    out.push(normalized);
  }
  return { rows: out, truncated: false };
}

interface RawResult {
  rows: unknown[][];
  fields: Array<{ name: string; dataTypeID: number }>;
}

/**
 * A session that runs the statement as `role` in a read-only transaction with a statement timeout, and sends the
 * statement alone through the extended query protocol (one statement per message), then rolls back.
 */
export type RoleSession = (
  role: string,
  schema: string,
  statement: string,
  timeoutMs: number,
) => Promise<RawResult>;

interface PgPoolClient {
  query(config: { text: string; rowMode?: 'array'; queryMode?: 'extended' }): Promise<RawResult>;
  query(text: string): Promise<unknown>;
  release(err?: boolean): void;
}
interface PgPool {
  connect(): Promise<PgPoolClient>;
}
interface PgliteTx {
  query(text: string, params?: unknown[], options?: { rowMode?: 'array' }): Promise<RawResult>;
  exec(text: string): Promise<unknown>;
  rollback(): Promise<void>;
}
interface Pglite {
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
}

export function roleSessionFor(database: Database): RoleSession {
  const client = (database.db as unknown as { $client: unknown }).$client;
  const setup = (role: string, schema: string, timeoutMs: number) => [
    `SET LOCAL ROLE ${quoteIdent(role)}`,
    `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`,
    `SET LOCAL search_path = ${quoteIdent(schema)}`,
  ];
  if (database.driver === 'postgres') {
    const pool = client as PgPool;
    return async (role, schema, statement, timeoutMs) => {
      const conn = await pool.connect();
      try {
        // Our own text, one round trip (simple protocol); the requester's statement goes alone, extended protocol.
        await conn.query(
          [
            'BEGIN TRANSACTION READ ONLY ISOLATION LEVEL REPEATABLE READ',
            ...setup(role, schema, timeoutMs),
          ].join('; '),
        );
        return await conn.query({ text: statement, rowMode: 'array', queryMode: 'extended' });
      } finally {
        // The rollback is queued on this connection and the connection goes back to the pool once it is done;
        // the answer does not wait for it (nothing was written: the transaction is read-only).
        void conn.query('ROLLBACK').then(
          () => conn.release(),
          () => conn.release(true),
        );
      }
    };
  }
  if (database.driver === 'pglite') {
    const pglite = client as Pglite;
    return async (role, schema, statement, timeoutMs) =>
      pglite.transaction(async (tx) => {
        await tx.exec(['SET TRANSACTION READ ONLY', ...setup(role, schema, timeoutMs)].join('; '));
        // PGlite's query() uses the extended protocol: several statements in one message are refused.
        const result = await tx.query(statement, [], { rowMode: 'array' });
        await tx.rollback();
        return result;
      });
  }
  return async () => {
    throw new Error(
      'the builtin environment runs queries on PostgreSQL or PGlite; use envsvc.provider = "http"',
    );
  };
}

export function createBuiltinProvider(database: Database): EnvironmentProvider {
  const db = database.db;
  const session = roleSessionFor(database);
  return {
    name: 'builtin',
    async provision(request: RequestRow): Promise<Provisioned> {
      const { schema, role } = environmentNames(request.id);
      const resolve = catalogResolver(db);
      const views: string[] = [];
      for (const d of datasetsOf(request.scope as Scope))
        views.push(await datasetViewSql(schema, d, resolve));
      const now = new Date().toISOString();
      await db.transaction(async (tx) => {
        // Idempotent: a retry after a failure starts from nothing.
        await tx.execute(sql.raw(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`));
        await tx.execute(sql.raw(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
        await tx.execute(sql.raw(`CREATE SCHEMA ${quoteIdent(schema)}`));
        for (const view of views) await tx.execute(sql.raw(view));
        await tx.execute(
          sql.raw(`CREATE ROLE ${quoteIdent(role)} NOLOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE`),
        );
        await tx.execute(sql.raw(`GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`));
        await tx.execute(
          sql.raw(`GRANT SELECT ON ALL TABLES IN SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`),
        );
        // The service must be able to SET ROLE to it (a superuser already can).
        await tx.execute(sql.raw(`GRANT ${quoteIdent(role)} TO CURRENT_USER`));
        await recordAudit(tx, {
          actionType: 'environment.provisioned',
          actor: ENV_ACTOR,
          resourceType: 'request',
          resourceId: request.id,
          source: 'env-svc',
          environmentId: schema,
          environmentName: schema,
          appName: 'builtin',
          metadata: { role, views: datasetsOf(request.scope as Scope).map((d) => d.namespace) },
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
      const { schema, role } = environmentNames(request.id);
      await db.transaction(async (tx) => {
        await tx.execute(sql.raw(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`));
        await tx.execute(sql.raw(`DROP ROLE IF EXISTS ${quoteIdent(role)}`));
        await recordAudit(tx, {
          actionType: 'environment.torn_down',
          actor: ENV_ACTOR,
          resourceType: 'request',
          resourceId: request.id,
          source: 'env-svc',
          environmentId: schema,
          environmentName: schema,
          appName: 'builtin',
          metadata: { role },
        });
      });
    },
    async query(request: QueryTarget, statement: string, limits: QueryLimits): Promise<QueryResult> {
      const { schema, role } = environmentNames(request.id);
      const started = performance.now();
      // One row more than the cap tells whether there were more.
      const capped = `SELECT * FROM (\n${statement}\n) AS q LIMIT ${limits.maxRows + 1}`;
      const raw = await session(role, schema, capped, limits.statementTimeoutMs);
      const { rows, truncated } = capRows(raw.rows, limits);
      return {
        columns: raw.fields.map((f) => ({
          name: f.name,
          type: TYPE_NAMES[f.dataTypeID] ?? String(f.dataTypeID),
        })),
        rows,
        row_count: rows.length,
        truncated,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
      };
    },
  };
}
