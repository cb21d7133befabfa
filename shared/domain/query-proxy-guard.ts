// The first layer of the query proxy: the statement is parsed with PostgreSQL's own parser (libpg-query, WASM) and
// accepted only when it is exactly one plain read-only SELECT built from an allowlist of node types, reading only
// the request's views (or its own CTEs), calling only allowlisted functions. Anything else is refused before it
// reaches the database. The other layers (the request's role, the read-only transaction, the extended protocol,
// the statement timeout) hold even when this one is bypassed; each is tested on its own.
import { loadModule, parseSync } from 'libpg-query';
import { badRequest } from '../http/errors.ts';

/** Node types a statement may contain. Everything else (DML, DDL, utility statements, table functions…) is refused. */
const ALLOWED_NODES = new Set([
  'SelectStmt',
  'ResTarget',
  'ColumnRef',
  'String',
  'A_Star',
  'A_Const',
  'Integer',
  'Float',
  'Boolean',
  'BitString',
  'A_Expr',
  'BoolExpr',
  'NullTest',
  'BooleanTest',
  'SubLink',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'TypeCast',
  'TypeName',
  'RangeVar',
  'JoinExpr',
  'Alias',
  'RangeSubselect',
  'SortBy',
  'WindowDef',
  'WithClause',
  'CommonTableExpr',
  'List',
  'A_Indirection',
  'A_Indices',
  'A_ArrayExpr',
  'RowExpr',
  'SQLValueFunction',
  'GroupingSet',
  'CollateClause',
  'NamedArgExpr',
  'FuncCall',
]);

/** Functions a statement may call: aggregates, window functions and pure scalar functions. No I/O, no sleep, no settings. */
export const ALLOWED_FUNCTIONS = new Set([
  // aggregates
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'bool_and',
  'bool_or',
  'every',
  'string_agg',
  'array_agg',
  'json_agg',
  'jsonb_agg',
  'json_object_agg',
  'jsonb_object_agg',
  'stddev',
  'stddev_pop',
  'stddev_samp',
  'variance',
  'var_pop',
  'var_samp',
  'percentile_cont',
  'percentile_disc',
  'mode',
  'corr',
  // window
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  // numbers
  'abs',
  'ceil',
  'ceiling',
  'floor',
  'round',
  'trunc',
  'mod',
  'power',
  'sqrt',
  'ln',
  'log',
  'exp',
  'sign',
  'width_bucket',
  // text
  'lower',
  'upper',
  'length',
  'char_length',
  'character_length',
  'octet_length',
  'substring',
  'substr',
  'trim',
  'btrim',
  'ltrim',
  'rtrim',
  'replace',
  'concat',
  'concat_ws',
  'left',
  'right',
  'split_part',
  'position',
  'strpos',
  'lpad',
  'rpad',
  'initcap',
  'reverse',
  'starts_with',
  'regexp_replace',
  'regexp_like',
  'md5',
  // dates
  'date_trunc',
  'date_part',
  'extract',
  'now',
  'age',
  'make_date',
  'make_timestamp',
  'to_char',
  'to_date',
  'to_timestamp',
  'to_number',
  'timezone',
  // json
  'json_build_object',
  'jsonb_build_object',
  'json_build_array',
  'jsonb_build_array',
  'to_json',
  'to_jsonb',
  'jsonb_extract_path_text',
  'json_extract_path_text',
  'jsonb_array_length',
  'jsonb_typeof',
  // arrays
  'array_length',
  'cardinality',
  'array_to_string',
]);

export interface GuardContext {
  /** The request's schema: the only schema a statement may name. */
  schema: string;
  /** The request's views (lower case): the only relations a statement may read, besides its own CTEs. */
  views: ReadonlySet<string>;
}

let loaded: Promise<void> | undefined;
/** Loads the parser's WASM module once; call before checkStatement (the query path awaits it). */
export function loadSqlParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

const refuse = (reason: string) => badRequest('sql_refused', `The statement was refused: ${reason}.`);

type NodeObject = Record<string, unknown>;
const isObject = (v: unknown): v is NodeObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function names(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => (isObject(item) && isObject(item.String) ? String(item.String.sval ?? '') : ''));
}

function collectCtes(value: unknown, out: Set<string>, depth = 0): void {
  if (depth > 500) throw refuse('it nests too deeply');
  if (Array.isArray(value)) {
    for (const v of value) collectCtes(v, out, depth + 1);
  } else if (isObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'CommonTableExpr' && isObject(v) && typeof v.ctename === 'string') out.add(v.ctename);
      collectCtes(v, out, depth + 1);
    }
  }
}

function checkTypeName(node: NodeObject): void {
  const parts = names(node.names);
  const type = (parts.at(-1) ?? '').toLowerCase();
  if (parts.length > 1 && parts[0] !== 'pg_catalog') throw refuse(`type ${parts.join('.')} is not allowed`);
  // reg* casts look objects up in the catalogs (regclass, regproc, regrole…).
  if (type.startsWith('reg') || type === 'lo' || type.startsWith('pg_'))
    throw refuse(`type ${type} is not allowed`);
}

function walk(value: unknown, ctx: GuardContext, ctes: ReadonlySet<string>, depth: number): void {
  if (depth > 500) throw refuse('it nests too deeply');
  if (Array.isArray(value)) {
    for (const v of value) walk(v, ctx, ctes, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (/^[A-Z]/.test(key)) {
      if (!ALLOWED_NODES.has(key)) throw refuse(`${key} is not allowed (only a single read-only SELECT is)`);
      if (!isObject(v)) continue;
      if (key === 'RangeVar') {
        const rel = String(v.relname ?? '');
        if (v.catalogname) throw refuse('a database name is not allowed');
        if (v.schemaname !== undefined) {
          if (v.schemaname !== ctx.schema || !ctx.views.has(rel))
            throw refuse(`relation ${v.schemaname}.${rel} is outside this request`);
        } else if (!ctx.views.has(rel) && !ctes.has(rel)) {
          throw refuse(`relation ${rel} is outside this request`);
        }
      } else if (key === 'FuncCall') {
        const parts = names(v.funcname);
        const fn = (parts.at(-1) ?? '').toLowerCase();
        if ((parts.length > 1 && parts[0] !== 'pg_catalog') || !ALLOWED_FUNCTIONS.has(fn)) {
          throw refuse(`function ${parts.join('.')} is not allowed`);
        }
      } else if (key === 'TypeName') {
        checkTypeName(v);
      } else if (key === 'SelectStmt') {
        if (v.intoClause) throw refuse('SELECT INTO creates a table');
        if (Array.isArray(v.lockingClause) && v.lockingClause.length)
          throw refuse('row locks (FOR UPDATE/SHARE) are not allowed');
      } else if (key === 'CommonTableExpr') {
        const q = v.ctequery;
        if (!isObject(q) || !('SelectStmt' in q)) throw refuse('a CTE must be a SELECT');
      }
    } else if (key === 'typeName' && isObject(v)) {
      checkTypeName(v);
    } else if (key === 'intoClause') {
      throw refuse('SELECT INTO creates a table');
    }
    walk(v, ctx, ctes, depth + 1);
  }
}

/**
 * Accepts exactly one read-only SELECT over the request's views, returning the statement text to run (without a
 * trailing semicolon); anything else is a 400 sql_refused naming the reason. Call loadSqlParser() first.
 */
export function checkStatement(text: string, ctx: GuardContext): string {
  if (text.includes('\0')) throw refuse('it contains a NUL character');
  if (text.trim() === '') throw refuse('it is empty');
  let parsed: { stmts?: Array<{ stmt?: unknown; stmt_location?: number; stmt_len?: number }> };
  try {
    parsed = parseSync(text) as typeof parsed;
  } catch (err) {
    throw badRequest('sql_syntax_error', `The statement does not parse: ${(err as Error).message}.`);
  }
  const stmts = parsed.stmts ?? [];
  if (stmts.length !== 1) throw refuse(stmts.length === 0 ? 'it is empty' : 'send one statement at a time');
  const only = stmts[0] as { stmt?: unknown; stmt_location?: number; stmt_len?: number };
  if (!isObject(only.stmt) || !('SelectStmt' in only.stmt)) {
    const kind = isObject(only.stmt) ? Object.keys(only.stmt)[0] : 'unknown';
    throw refuse(`${kind} is not a SELECT`);
  }
  const ctes = new Set<string>();
  collectCtes(only.stmt, ctes);
  walk(only.stmt, ctx, ctes, 0);
  // Locations are byte offsets into the UTF-8 text.
  const bytes = Buffer.from(text, 'utf8');
  const start = only.stmt_location ?? 0;
  const statement = only.stmt_len ? bytes.subarray(start, start + only.stmt_len) : bytes.subarray(start);
  return statement.toString('utf8').trim();
}
