// The first layer of the query proxy on its own: PostgreSQL's parser (libpg-query) and the allowlist.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ServiceError } from '#shared/core/errors.ts';
import {
  checkStatement,
  type GuardContext,
  loadSqlParser,
  MAX_PAD_LENGTH,
  MAX_REPLACEMENT_BYTES,
} from '#shared/requests/query/guard.ts';

const ctx: GuardContext = {
  schema: 'req_0123456789abcdef0123456789abcdef',
  views: new Set(['orders', 'products']),
};
/** PGlite: no statement timeout. */
const noTimeout: GuardContext = { ...ctx, withoutTimeout: true };

const refusedCode = (text: string, context: GuardContext = ctx): string => {
  try {
    checkStatement(text, context);
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    assert.equal(err.kind, 'invalid');
    return err.code;
  }
};

const ALLOWED = [
  'SELECT * FROM orders',
  'select id, total from orders where total > 100 order by total desc limit 10',
  `SELECT * FROM ${ctx.schema}.orders`,
  'SELECT region, count(*), sum(total), avg(total)::numeric(10,2) FROM orders GROUP BY region HAVING count(*) > 1',
  'SELECT o.id, p.name FROM orders o JOIN products p ON p.id = o.product_id',
  'WITH big AS (SELECT * FROM orders WHERE total > 10) SELECT count(*) FROM big',
  'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT * FROM n',
  "SELECT date_trunc('month', ordered_at) AS m, count(*) FROM orders GROUP BY 1 ORDER BY 1",
  'SELECT id, row_number() OVER (PARTITION BY region ORDER BY total DESC) FROM orders',
  "SELECT coalesce(status, 'none'), nullif(region, ''), greatest(1, 2), CASE WHEN total > 1 THEN 'a' ELSE 'b' END FROM orders",
  'SELECT extract(year FROM ordered_at), lower(status) FROM orders',
  'SELECT * FROM orders WHERE id IN (SELECT id FROM products)',
  'SELECT 1',
  'VALUES (1), (2)',
  'TABLE orders',
  "SELECT 'ü' AS ünïcode FROM orders;",
  'SELECT * FROM orders -- trailing comment',
  // CTE names are visible in their own query level and its descendants.
  'WITH a AS (SELECT 1 AS x), b AS (SELECT * FROM a) SELECT * FROM b',
  'WITH o AS (SELECT * FROM orders) SELECT * FROM (SELECT * FROM o) x WHERE EXISTS (SELECT 1 FROM o)',
  'WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a',
  'WITH orders AS (SELECT 1 AS id) SELECT * FROM orders',
  '(WITH c AS (SELECT 2) SELECT * FROM c) UNION SELECT id FROM orders',
  'SELECT * FROM ORDERS',
  // Bounded string functions.
  "SELECT lpad(status, 20, '*'), rpad(region, 8) FROM orders",
  `SELECT lpad('x', ${MAX_PAD_LENGTH})`,
  "SELECT replace(status, 'paid', 'PAID'), regexp_replace(region, 'E(U)', '\\1') FROM orders",
  "SELECT replace(status, 'a', '') FROM orders",
  'SELECT 1 OPERATOR(pg_catalog.+) 1',
];

/** Accepted, but only by engines that can stop a statement (refused with withoutTimeout). */
const NEEDS_TIMEOUT = [
  'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n',
  "SELECT * FROM orders WHERE status ~ '(a|aa)*b'",
  "SELECT * FROM orders WHERE status !~* 'x'",
  "SELECT regexp_like(status, 'p.*d') FROM orders",
  "SELECT regexp_replace(status, 'a', 'b') FROM orders",
];

const REFUSED: Array<[string, string]> = [
  ['DELETE FROM orders', 'sql_refused'],
  ['UPDATE orders SET total = 0', 'sql_refused'],
  ['INSERT INTO orders VALUES (1)', 'sql_refused'],
  ['MERGE INTO orders o USING products p ON o.id = p.id WHEN MATCHED THEN DELETE', 'sql_refused'],
  ['DROP TABLE orders', 'sql_refused'],
  ['CREATE TABLE x (a int)', 'sql_refused'],
  ['CREATE VIEW v AS SELECT 1', 'sql_refused'],
  ['ALTER ROLE current_user SUPERUSER', 'sql_refused'],
  ['GRANT ALL ON orders TO public', 'sql_refused'],
  ['TRUNCATE orders', 'sql_refused'],
  ['COPY orders TO STDOUT', 'sql_refused'],
  ["COPY orders TO PROGRAM 'curl example.com'", 'sql_refused'],
  ['SET ROLE postgres', 'sql_refused'],
  ['SET SESSION AUTHORIZATION postgres', 'sql_refused'],
  ['RESET ROLE', 'sql_refused'],
  ['SET LOCAL statement_timeout = 0', 'sql_refused'],
  ['SELECT 1; SELECT 2', 'sql_refused'],
  ['SELECT 1; COMMIT; DROP TABLE orders', 'sql_refused'],
  ['COMMIT', 'sql_refused'],
  ['WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d', 'sql_refused'],
  ['WITH u AS (UPDATE orders SET total = 0 RETURNING id) SELECT * FROM u', 'sql_refused'],
  ['SELECT * INTO copy_of_orders FROM orders', 'sql_refused'],
  ['SELECT * FROM orders FOR UPDATE', 'sql_refused'],
  ['SELECT * FROM orders FOR KEY SHARE', 'sql_refused'],
  ['SELECT * FROM demo.orders', 'sql_refused'],
  ['SELECT * FROM public.users', 'sql_refused'],
  ['SELECT * FROM users', 'sql_refused'],
  ['SELECT * FROM pg_authid', 'sql_refused'],
  ['SELECT * FROM pg_catalog.pg_class', 'sql_refused'],
  ['SELECT * FROM information_schema.columns', 'sql_refused'],
  ['SELECT * FROM otherdb.req_x.orders', 'sql_refused'],
  ['SELECT * FROM req_ffffffffffffffffffffffffffffffff.orders', 'sql_refused'],
  [`SELECT * FROM ${ctx.schema}.notaview`, 'sql_refused'],
  ["SELECT pg_read_file('/etc/passwd')", 'sql_refused'],
  ["SELECT pg_catalog.pg_read_file('/etc/passwd')", 'sql_refused'],
  ["SELECT lo_import('/etc/passwd')", 'sql_refused'],
  ["SELECT * FROM dblink('host=evil', 'select 1') AS t(a int)", 'sql_refused'],
  ['SELECT pg_sleep(100)', 'sql_refused'],
  ["SELECT pg_sleep_for('1 hour')", 'sql_refused'],
  ["SELECT set_config('role', 'postgres', false)", 'sql_refused'],
  ["SELECT current_setting('data_directory')", 'sql_refused'],
  ['SELECT pg_terminate_backend(pid) FROM orders', 'sql_refused'],
  ['SELECT public.evil()', 'sql_refused'],
  ["SELECT 'pg_authid'::regclass", 'sql_refused'],
  ["SELECT CAST('x' AS regproc)", 'sql_refused'],
  ['SELECT * FROM generate_series(1, 10)', 'sql_refused'],
  ['SELECT * FROM orders TABLESAMPLE BERNOULLI (10)', 'sql_refused'],
  ["SELECT xmlparse(document '<a/>')", 'sql_refused'],
  ["SELECT * FROM XMLTABLE('/a' PASSING '<a/>' COLUMNS x int)", 'sql_refused'],
  ['SELECT $1', 'sql_refused'],
  ['EXPLAIN SELECT * FROM orders', 'sql_refused'],
  ['DO $$ BEGIN END $$', 'sql_refused'],
  ['PREPARE p AS SELECT 1', 'sql_refused'],
  ['LISTEN ch', 'sql_refused'],
  ['LOCK TABLE orders', 'sql_refused'],
  ['VACUUM', 'sql_refused'],
  ['', 'sql_refused'],
  [';', 'sql_refused'],
  ['SELEC 1', 'sql_syntax_error'],
  ["SELECT 'unterminated", 'sql_syntax_error'],
  ['SELECT 1 /* unterminated', 'sql_syntax_error'],
  ['SELECT 1\0', 'sql_refused'],
  // A CTE name is not visible outside the query level that defines it (the name would otherwise resolve, at run
  // time, to the catalog relation it shadows).
  ['SELECT * FROM (WITH pg_views AS (SELECT 1) SELECT 1) a, pg_views', 'sql_refused'],
  ['SELECT * FROM (WITH views AS (SELECT 1) SELECT 1) a, views', 'sql_refused'],
  ['SELECT * FROM (WITH users AS (SELECT 1) SELECT * FROM users) a, users', 'sql_refused'],
  [
    'SELECT * FROM orders WHERE EXISTS (WITH secrets AS (SELECT 1) SELECT 1) AND id IN (SELECT 1 FROM secrets)',
    'sql_refused',
  ],
  ['SELECT (SELECT 1 FROM (WITH users AS (SELECT 1) SELECT 1) x), * FROM users', 'sql_refused'],
  ['(WITH users AS (SELECT 1) SELECT * FROM users) UNION SELECT * FROM users', 'sql_refused'],
  ['WITH a AS (SELECT * FROM users), users AS (SELECT 1) SELECT * FROM a', 'sql_refused'],
  ['WITH a AS (SELECT * FROM a) SELECT * FROM a', 'sql_refused'],
  ['WITH pg_roles AS (SELECT 1) SELECT * FROM pg_roles', 'sql_refused'],
  ['WITH x AS (SELECT 1) SELECT * FROM orders, (WITH y AS (SELECT 1) SELECT * FROM x) z, y', 'sql_refused'],
  // Catalog relations, qualified or not, whatever the case.
  ['SELECT * FROM pg_views', 'sql_refused'],
  ['SELECT definition FROM pg_catalog.pg_views', 'sql_refused'],
  ['SELECT * FROM PG_SETTINGS', 'sql_refused'],
  ['SELECT * FROM "pg_catalog"."pg_roles"', 'sql_refused'],
  ['SELECT * FROM orders, pg_stat_activity', 'sql_refused'],
  ['SELECT * FROM information_schema.views', 'sql_refused'],
  ['SELECT * FROM information_schema.role_table_grants', 'sql_refused'],
  ['SELECT NULL::pg_catalog.pg_class', 'sql_refused'],
  ['SELECT NULL::information_schema.sql_identifier', 'sql_refused'],
  ['SELECT 1 OPERATOR(public.+) 1', 'sql_refused'],
  ['SELECT "ORDERS".id FROM "ORDERS"', 'sql_refused'],
  // Functions that multiply the size of a value: bounded, constant arguments, never nested.
  ['SELECT lpad(status, 100000000) FROM orders', 'sql_refused'],
  [`SELECT rpad('x', ${MAX_PAD_LENGTH + 1})`, 'sql_refused'],
  ['SELECT lpad(status, id) FROM orders', 'sql_refused'],
  ["SELECT lpad(status, 10 * 1000000, 'x') FROM orders", 'sql_refused'],
  ["SELECT replace(replace(status, 'a', 'aaaa'), 'a', 'aaaa') FROM orders", 'sql_refused'],
  [`SELECT replace(status, 'a', '${'y'.repeat(MAX_REPLACEMENT_BYTES + 1)}') FROM orders`, 'sql_refused'],
  ["SELECT replace(status, 'a', region) FROM orders", 'sql_refused'],
  ["SELECT regexp_replace(lpad(status, 9000), '', 'yy', 'g') FROM orders", 'sql_refused'],
  ["SELECT lpad(replace(status, 'a', 'bb'), 10) FROM orders", 'sql_refused'],
  ["SELECT repeat('x', 1000000000)", 'sql_refused'],
  ["SELECT string_agg(repeat(status, 1000), ',') FROM orders", 'sql_refused'],
  ['SELECT generate_series(1, 1000000000)', 'sql_refused'],
];

describe('SQL guard', () => {
  before(() => loadSqlParser());

  test(`accepts plain SELECTs over the request's views (${ALLOWED.length})`, () => {
    for (const text of ALLOWED) assert.equal(refusedCode(text), 'accepted', `statement: ${text}`);
  });

  test(`refuses ${REFUSED.length} hostile or non-SELECT statements before execution`, () => {
    assert.ok(REFUSED.length >= 50);
    for (const [text, code] of REFUSED)
      assert.equal(refusedCode(text), code, `statement: ${JSON.stringify(text)}`);
  });

  test('returns exactly the one statement, without the trailing semicolon, even after non-ASCII text', () => {
    assert.equal(checkStatement("SELECT 'ü' FROM orders;  ", ctx).text, "SELECT 'ü' FROM orders");
    assert.equal(checkStatement('  SELECT 1  ', ctx).text, 'SELECT 1');
  });

  test('without a statement timeout (PGlite), what can run without end is refused too', () => {
    for (const text of NEEDS_TIMEOUT) {
      assert.equal(refusedCode(text), 'accepted', `statement: ${text}`);
      assert.equal(refusedCode(text, noTimeout), 'sql_refused', `statement: ${text}`);
    }
    for (const text of ALLOWED.filter((t) => !/recursive|regexp/i.test(t))) {
      assert.equal(refusedCode(text, noTimeout), 'accepted', `statement: ${text}`);
    }
  });

  test('tells whether a statement combines relations (engines without a timeout plan those first)', () => {
    const combines = (text: string) => checkStatement(text, ctx).combines;
    assert.equal(combines('SELECT * FROM orders ORDER BY id LIMIT 100'), false);
    assert.equal(combines('SELECT lower(status), count(*) FROM orders WHERE total > 1 GROUP BY 1'), false);
    assert.equal(combines('SELECT 1'), false);
    assert.equal(combines('SELECT * FROM orders, products'), true);
    assert.equal(combines('SELECT * FROM orders o JOIN products p ON p.id = o.id'), true);
    assert.equal(combines('SELECT * FROM (SELECT * FROM orders) x'), true);
    assert.equal(combines('SELECT (SELECT max(id) FROM products) FROM orders'), true);
    assert.equal(combines('WITH x AS (SELECT 1) SELECT * FROM x'), true);
    assert.equal(combines('SELECT id FROM orders UNION SELECT id FROM orders'), true);
  });

  test('the refusal names the reason', () => {
    assert.throws(() => checkStatement('SELECT pg_sleep(1)', ctx), /function pg_sleep is not allowed/);
    assert.throws(
      () => checkStatement('SELECT * FROM demo.x', ctx),
      /relation demo\.x is outside this request/,
    );
    assert.throws(() => checkStatement('SELECT 1; SELECT 2', ctx), /one statement at a time/);
    assert.throws(
      () => checkStatement('SELECT * FROM (WITH pg_views AS (SELECT 1) SELECT 1) a, pg_views', ctx),
      /CTE name may not start with pg_/,
    );
    assert.throws(
      () => checkStatement('SELECT * FROM (WITH users AS (SELECT 1) SELECT 1) a, users', ctx),
      /relation users is outside this request/,
    );
    assert.throws(
      () => checkStatement('SELECT lpad(status, 1e9::int) FROM orders', ctx),
      /lpad pads to at most/,
    );
  });
});
