// The SQL text of a request's environment: a schema per request holding one view per dataset (only the allowed
// columns, only the rows its filter groups allow, only its declared joins), and a role per request that may read those
// views and nothing else. Every name is quoted and every value is a quoted literal. Names inside an environment are
// lower case. Where the sources come from (the catalog) and when this runs: provider.ts.
import type { Dataset, FilterCondition, FilterGroup } from '../../schemas.ts';
import { COLUMN, JOIN_ON, viewColumnName } from '../../schemas.ts';

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

export interface EnvironmentNames {
  schema: string;
  role: string;
}

/** The schema and role of a request's environment. */
export function environmentNames(requestId: string): EnvironmentNames {
  const hex = requestId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error('request id is not a UUID');
  return { schema: `req_${hex}`, role: `req_${hex}_reader` };
}

/** The request id (a UUID with dashes) whose environment names `environmentNames` gave. */
export function requestIdOf(names: EnvironmentNames): string {
  const hex = /^req_([0-9a-f]{32})$/.exec(names.schema)?.[1];
  if (!hex) throw new Error(`not a request environment: ${names.schema}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const ROLE_PATTERN = `'^req_[0-9a-f]{32}_reader$'`;
/** Whether the role `r` has a privilege or an object in the database `dbid` (pg_shdepend is cluster-wide). */
const roleDependsOn = (dbid: string) =>
  `EXISTS (SELECT 1 FROM pg_catalog.pg_shdepend d WHERE d.refclassid = 'pg_catalog.pg_authid'::regclass AND d.refobjid = r.oid AND ${dbid})`;

/**
 * The request ids (32 hex digits) of the environments in this database whose request is neither approved (being
 * provisioned) nor active: a schema `req_*`, or a `req_*_reader` role holding privileges here. Roles are cluster-wide
 * while schemas and privileges are not, so a role counts as this database's only through its privileges here: the
 * sweep of one database never touches the live environments of another on the same server.
 */
export const staleEnvironmentsSql = `WITH env AS (
  SELECT substr(r.rolname, 5, 32) AS hex FROM pg_catalog.pg_roles r
  WHERE r.rolname ~ ${ROLE_PATTERN}
    AND ${roleDependsOn('d.dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())')}
  UNION
  SELECT substr(nspname, 5) FROM pg_catalog.pg_namespace WHERE nspname ~ '^req_[0-9a-f]{32}$'
)
SELECT hex FROM env WHERE NOT EXISTS (
  SELECT 1 FROM requests q WHERE q.id = env.hex::uuid AND q.status IN ('approved', 'active'))`;

/**
 * The `req_*_reader` roles that hold nothing in any database: left by a database dropped while they were live
 * (DROP DATABASE cannot drop cluster-wide roles). A live environment's role always holds its grants, made in the
 * transaction that created it.
 */
export const orphanRolesSql = `SELECT r.rolname FROM pg_catalog.pg_roles r
WHERE r.rolname ~ ${ROLE_PATTERN} AND NOT ${roleDependsOn('TRUE')}`;

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
  const [, qualifier, name = ''] = m;
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

/**
 * Names inside an environment are lower case, what PostgreSQL folds unquoted identifiers to: a dataset `EuOrders` is
 * the view `euorders`, read as `SELECT * FROM EuOrders` or `euorders`, and the SQL guard checks the same folded
 * name. Source tables and columns keep their exact case (they are quoted where they are read).
 */
export const viewName = (d: Pick<Dataset, 'namespace'>): string => d.namespace.toLowerCase();

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
    const [, q1 = '', c1, q2 = '', c2] = m;
    // `a.x = b.y` or `x = y` (left: the dataset, right: the join).
    const left = c1 === undefined ? `t0.${quoteIdent(q1)}` : columnRef(`${q1}.${c1}`, aliases);
    const right = c2 === undefined ? `${alias}.${quoteIdent(q2)}` : columnRef(`${q2}.${c2}`, aliases);
    from.push(
      `${j.type === 'left' ? 'LEFT JOIN' : 'JOIN'} ${await resolve(j.source)} AS ${alias} ON ${left} = ${right}`,
    );
  }
  const select = d.columns.map((c) => `${columnRef(c, aliases)} AS ${quoteIdent(viewColumnName(c))}`);
  const where = d.filters ? filterSql(d.filters, aliases) : 'TRUE';
  return `CREATE VIEW ${quoteIdent(schema)}.${quoteIdent(viewName(d))} WITH (security_barrier = true) AS SELECT ${select.join(', ')} FROM ${from.join(' ')} WHERE ${where}`;
}

/**
 * Drops a reader role (nothing to drop is no error) through the owner's request_role_drop: the service may not manage
 * roles itself (migrations/0034_service_role.sql).
 */
export const dropRoleSql = (role: string): string => `SELECT request_role_drop(${quoteLiteral(role)})`;

/** Drops a request's environment, its schema (with its views and its role's grants) and its role. */
export const dropEnvironmentSql = ({ schema, role }: EnvironmentNames): string[] => [
  `DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`,
  dropRoleSql(role),
];

/**
 * Creates a request's environment, where dropEnvironmentSql left nothing: the schema, the `views` of its datasets
 * (datasetViewSql), and the role that may read them and nothing else.
 */
export const createEnvironmentSql = (
  { schema, role }: EnvironmentNames,
  views: readonly string[],
): string[] => [
  `CREATE SCHEMA ${quoteIdent(schema)}`,
  ...views,
  // The role, made by the owner's request_role_create, which also lets the service SET ROLE to it.
  `SELECT request_role_create(${quoteLiteral(role)})`,
  `GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(role)}`,
];

/** Refreshes the planner's statistics of a source table, named as ResolveTable gives it (quoted `schema.table`). */
export const analyzeSql = (table: string): string => `ANALYZE ${table}`;
