// The first layer of the query proxy: the statement is parsed with PostgreSQL's own parser (libpg-query, WASM) and
// accepted only when it is exactly one plain read-only SELECT built from an allowlist of node types, reading only
// the request's views (or CTEs visible where they are named: a CTE's name is scoped to the query level that defines
// it and its descendants, as PostgreSQL scopes it), never a pg_* name, calling only allowlisted functions, and the
// functions that multiply a value's size only in a bounded form. Anything else is refused before it reaches the
// database. The other layers (the request's role, its search_path, the read-only transaction, the extended protocol,
// the statement timeout, the result caps) hold even when this one is bypassed; each is tested on its own.
import { invalid } from '../../core/errors.ts';

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

/**
 * Functions whose output can be much larger than their input. Each is allowed only in a bounded form (see
 * checkAmplifier): a constant, small growth factor, and never nested inside another one, so that the size of a value
 * stays linear in the size of the data and of the statement.
 */
const AMPLIFIERS: Record<string, { arg: number; kind: 'length' | 'text' }> = {
  lpad: { arg: 1, kind: 'length' },
  rpad: { arg: 1, kind: 'length' },
  replace: { arg: 2, kind: 'text' },
  regexp_replace: { arg: 2, kind: 'text' },
};
/** The largest length lpad/rpad may pad to, and the longest replacement text replace/regexp_replace may insert. */
export const MAX_PAD_LENGTH = 10_000;
export const MAX_REPLACEMENT_BYTES = 100;

/** Functions and operators that can run for an unbounded time on a pattern (regular expressions). */
const REGEX_FUNCTIONS = new Set(['regexp_replace', 'regexp_like']);
const REGEX_OPERATORS = new Set(['~', '~*', '!~', '!~*']);

export interface GuardContext {
  /** The request's schema: the only schema a statement may name. */
  schema: string;
  /** The request's views (lower case): the only relations a statement may read, besides its own CTEs in scope. */
  views: ReadonlySet<string>;
  /**
   * The engine cannot stop a running statement (PGlite has no statement_timeout): also refuse what can run for an
   * unbounded time whatever the data (WITH RECURSIVE, regular expressions).
   */
  withoutTimeout?: boolean;
}

/** A statement the guard accepted. */
export interface CheckedStatement {
  /** The statement to run, exactly as sent, without a trailing semicolon or surrounding blanks. */
  text: string;
  /**
   * It combines relations (joins, several FROM items, subqueries, CTEs, set operations): its cost is not bounded by
   * one pass over one view. Engines without a statement timeout plan such statements before running them.
   */
  combines: boolean;
}

type Parser = typeof import('libpg-query');
let parser: Parser | undefined;
let loaded: Promise<void> | undefined;
/**
 * Loads the parser once; call before checkStatement (the query path awaits it). Imported here, not at the top: the
 * package compiles its WASM as soon as it is imported, which only the first query should pay.
 */
export function loadSqlParser(): Promise<void> {
  loaded ??= import('libpg-query').then(async (library) => {
    await library.loadModule();
    parser = library;
  });
  return loaded;
}

const refuse = (reason: string) => invalid('sql_refused', `The statement was refused: ${reason}.`);

type NodeObject = Record<string, unknown>;
const isObject = (v: unknown): v is NodeObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function names(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => (isObject(item) && isObject(item.String) ? String(item.String.sval ?? '') : ''));
}

function checkTypeName(node: NodeObject): void {
  const parts = names(node.names);
  const type = (parts.at(-1) ?? '').toLowerCase();
  if (parts.length > 1 && parts[0] !== 'pg_catalog') throw refuse(`type ${parts.join('.')} is not allowed`);
  // reg* casts look objects up in the catalogs (regclass, regproc, regrole…); pg_* types are catalog row types.
  if (type.startsWith('reg') || type === 'lo' || type.startsWith('pg_'))
    throw refuse(`type ${type} is not allowed`);
}

const MAX_DEPTH = 500;

/** The walk of one statement: the guard context and what the walk learnt about the statement's shape. */
interface Walk {
  ctx: GuardContext;
  relations: number;
  combines: boolean;
}

const unwrap = (node: unknown): unknown => (isObject(node) && 'A_Const' in node ? node.A_Const : node);

function functionName(node: unknown): string | undefined {
  if (!isObject(node) || !isObject(node.FuncCall)) return undefined;
  return names(node.FuncCall.funcname).at(-1)?.toLowerCase();
}

/** Whether an amplifying function occurs anywhere inside `value`. */
function containsAmplifier(value: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) throw refuse('it nests too deeply');
  if (Array.isArray(value)) return value.some((v) => containsAmplifier(v, depth + 1));
  if (!isObject(value)) return false;
  const fn = functionName(value);
  if (fn !== undefined && fn in AMPLIFIERS) return true;
  return Object.values(value).some((v) => containsAmplifier(v, depth + 1));
}

function checkAmplifier(fn: string, call: NodeObject): void {
  const rule = AMPLIFIERS[fn];
  if (!rule) return;
  const args = Array.isArray(call.args) ? call.args : [];
  const bound = unwrap(args[rule.arg]) as NodeObject | undefined;
  if (rule.kind === 'length') {
    const length = isObject(bound) && isObject(bound.ival) ? Number(bound.ival.ival ?? 0) : Number.NaN;
    if (!Number.isInteger(length) || length > MAX_PAD_LENGTH) {
      throw refuse(`${fn} pads to at most ${MAX_PAD_LENGTH} characters, given as a constant`);
    }
  } else {
    const text = isObject(bound) && isObject(bound.sval) ? String(bound.sval.sval ?? '') : undefined;
    if (typeof text !== 'string' || Buffer.byteLength(text) > MAX_REPLACEMENT_BYTES) {
      throw refuse(`${fn} takes its replacement as a constant of at most ${MAX_REPLACEMENT_BYTES} bytes`);
    }
  }
  if (args.some((a) => containsAmplifier(a))) {
    throw refuse(`${fn} cannot be applied to the result of lpad, rpad, replace or regexp_replace`);
  }
}

/**
 * One SELECT (a `SelectStmt` node's body, or the `larg`/`rarg` of a set operation). Its WITH clause defines names
 * for itself and its descendants only: each CTE body sees the CTEs before it (all of them with RECURSIVE), the rest
 * of the statement sees all of them. A name is never visible outside the query level that defines it, so a CTE
 * cannot make a catalog relation of the same name elsewhere in the statement look like one of its own.
 */
function selectBody(body: NodeObject, walk: Walk, scope: ReadonlySet<string>, depth: number): void {
  if (depth > MAX_DEPTH) throw refuse('it nests too deeply');
  if (body.intoClause) throw refuse('SELECT INTO creates a table');
  if (Array.isArray(body.lockingClause) && body.lockingClause.length)
    throw refuse('row locks (FOR UPDATE/SHARE) are not allowed');
  let inner = scope;
  const withClause = body.withClause;
  if (withClause !== undefined) {
    if (!isObject(withClause) || !Array.isArray(withClause.ctes)) throw refuse('a WITH clause is malformed');
    const recursive = withClause.recursive === true;
    if (recursive && walk.ctx.withoutTimeout) {
      throw refuse('WITH RECURSIVE can run without end and this database cannot stop a statement');
    }
    const ctes = withClause.ctes.map((item) => {
      const cte = isObject(item) ? item.CommonTableExpr : undefined;
      if (!isObject(cte) || typeof cte.ctename !== 'string') throw refuse('a WITH clause is malformed');
      if (cte.ctename.startsWith('pg_')) throw refuse(`a CTE name may not start with pg_ (${cte.ctename})`);
      return cte;
    });
    const defined = ctes.map((cte) => cte.ctename as string);
    walk.combines = true;
    ctes.forEach((cte, i) => {
      const visible = new Set([...scope, ...(recursive ? defined : defined.slice(0, i))]);
      for (const [key, v] of Object.entries(cte)) {
        if (key === 'ctequery') {
          if (!isObject(v) || !isObject(v.SelectStmt)) throw refuse('a CTE must be a SELECT');
          selectBody(v.SelectStmt, walk, visible, depth + 1);
        } else if (key === 'aliascolnames') {
          walkNode(v, walk, visible, depth + 1);
        } else if (!['ctename', 'ctematerialized', 'location'].includes(key)) {
          throw refuse(`${key} is not allowed in a CTE`);
        }
      }
    });
    inner = new Set([...scope, ...defined]);
  }
  if (body.op !== undefined && body.op !== 'SETOP_NONE') walk.combines = true;
  for (const [key, v] of Object.entries(body)) {
    if (key === 'withClause') continue;
    if (key === 'larg' || key === 'rarg') {
      if (!isObject(v)) throw refuse('a set operation is malformed');
      selectBody(v, walk, inner, depth + 1);
    } else {
      walkNode(v, walk, inner, depth + 1);
    }
  }
}

function checkRelation(v: NodeObject, walk: Walk, scope: ReadonlySet<string>): void {
  const rel = String(v.relname ?? '');
  const { ctx } = walk;
  if (v.catalogname) throw refuse('a database name is not allowed');
  if (v.schemaname !== undefined) {
    if (v.schemaname !== ctx.schema || !ctx.views.has(rel))
      throw refuse(`relation ${v.schemaname}.${rel} is outside this request`);
  } else if (rel.startsWith('pg_')) {
    // Unqualified pg_* names resolve to the catalogs first on any search_path: never one of the request's views.
    throw refuse(`relation ${rel} is outside this request`);
  } else if (!scope.has(rel) && !ctx.views.has(rel)) {
    throw refuse(`relation ${rel} is outside this request`);
  }
  walk.relations += 1;
  if (walk.relations > 1) walk.combines = true;
}

function walkNode(value: unknown, walk: Walk, scope: ReadonlySet<string>, depth: number): void {
  if (depth > MAX_DEPTH) throw refuse('it nests too deeply');
  if (Array.isArray(value)) {
    for (const v of value) walkNode(v, walk, scope, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (/^[A-Z]/.test(key)) {
      if (!ALLOWED_NODES.has(key)) throw refuse(`${key} is not allowed (only a single read-only SELECT is)`);
      if (!isObject(v)) continue;
      if (key === 'SelectStmt') {
        selectBody(v, walk, scope, depth + 1);
        continue;
      }
      if (key === 'RangeVar') {
        checkRelation(v, walk, scope);
      } else if (key === 'RangeSubselect' || key === 'SubLink' || key === 'JoinExpr') {
        walk.combines = true;
      } else if (key === 'FuncCall') {
        const parts = names(v.funcname);
        const fn = (parts.at(-1) ?? '').toLowerCase();
        if ((parts.length > 1 && parts[0] !== 'pg_catalog') || !ALLOWED_FUNCTIONS.has(fn)) {
          throw refuse(`function ${parts.join('.')} is not allowed`);
        }
        if (walk.ctx.withoutTimeout && REGEX_FUNCTIONS.has(fn)) {
          throw refuse(`${fn} can run without end and this database cannot stop a statement`);
        }
        checkAmplifier(fn, v);
      } else if (key === 'A_Expr') {
        const op = names(v.name);
        if (op.length > 1 && op[0] !== 'pg_catalog') throw refuse(`operator ${op.join('.')} is not allowed`);
        if (walk.ctx.withoutTimeout && (v.kind === 'AEXPR_SIMILAR' || REGEX_OPERATORS.has(op.at(-1) ?? ''))) {
          throw refuse('regular expressions can run without end and this database cannot stop a statement');
        }
      } else if (key === 'TypeName') {
        checkTypeName(v);
      }
    } else if (key === 'typeName' && isObject(v)) {
      checkTypeName(v);
    } else if (key === 'intoClause') {
      throw refuse('SELECT INTO creates a table');
    } else if (key === 'withClause') {
      // Only a SELECT carries one, and selectBody scopes it; anywhere else the tree is not one we know.
      throw refuse('a WITH clause is not allowed here');
    }
    walkNode(v, walk, scope, depth + 1);
  }
}

/**
 * Accepts exactly one read-only SELECT over the request's views; anything else is a 400 sql_refused naming the
 * reason (sql_syntax_error when it does not parse). Call loadSqlParser() first.
 */
export function checkStatement(text: string, ctx: GuardContext): CheckedStatement {
  if (text.includes('\0')) throw refuse('it contains a NUL character');
  if (text.trim() === '') throw refuse('it is empty');
  if (!parser) throw new Error('the SQL parser is not loaded: call loadSqlParser() first');
  let parsed: { stmts?: Array<{ stmt?: unknown; stmt_location?: number; stmt_len?: number }> };
  try {
    parsed = parser.parseSync(text) as typeof parsed;
  } catch (err) {
    throw invalid('sql_syntax_error', `The statement does not parse: ${(err as Error).message}.`);
  }
  const stmts = parsed.stmts ?? [];
  if (stmts.length !== 1) throw refuse(stmts.length === 0 ? 'it is empty' : 'send one statement at a time');
  const only = stmts[0] as { stmt?: unknown; stmt_location?: number; stmt_len?: number };
  if (!isObject(only.stmt) || !isObject(only.stmt.SelectStmt)) {
    const kind = isObject(only.stmt) ? Object.keys(only.stmt)[0] : 'unknown';
    throw refuse(`${kind} is not a SELECT`);
  }
  const walk: Walk = { ctx, relations: 0, combines: false };
  walkNode(only.stmt, walk, new Set(), 0);
  // Locations are byte offsets into the UTF-8 text.
  const bytes = Buffer.from(text, 'utf8');
  const start = only.stmt_location ?? 0;
  const statement = only.stmt_len ? bytes.subarray(start, start + only.stmt_len) : bytes.subarray(start);
  return { text: statement.toString('utf8').trim(), combines: walk.combines };
}
