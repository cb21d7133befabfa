// The state machine and the builtin provider's SQL generation, without a database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REQUEST_STATUSES } from '#shared/core/db/schema.ts';
import { capRows, isoTimestamp } from '#shared/requests/environments/builtin/results.ts';
import { datasetViewSql, filterSql, quoteLiteral } from '#shared/requests/environments/builtin/view-sql.ts';
import { dataset, filterGroup } from '#shared/requests/schemas.ts';
import { canMove, type Move, TERMINAL, TRANSITIONS } from '#shared/requests/state.ts';

describe('request state machine', () => {
  test('every move and every state: only the listed moves are allowed', () => {
    const allowed: Record<Move, string[]> = {
      approve: ['pending'],
      deny: ['pending'],
      activate: ['approved'],
      revoke: ['approved', 'active'],
      expire: ['approved', 'active'],
    };
    for (const move of Object.keys(TRANSITIONS) as Move[]) {
      for (const status of REQUEST_STATUSES) {
        assert.equal(canMove(move, status), allowed[move].includes(status), `${move} from ${status}`);
      }
    }
  });
  test('terminal states have no way out', () => {
    for (const status of TERMINAL) {
      for (const move of Object.keys(TRANSITIONS) as Move[]) assert.equal(canMove(move, status), false);
    }
  });
});

describe('builtin environment SQL', () => {
  test('literals are quoted; identifiers are quoted; values cannot break out', () => {
    assert.equal(quoteLiteral("O'Brien"), "'O''Brien'");
    assert.equal(quoteLiteral("x'; DROP TABLE users; --"), "'x''; DROP TABLE users; --'");
    assert.equal(quoteLiteral(12.5), '12.5');
    assert.equal(quoteLiteral(true), 'TRUE');
    assert.equal(quoteLiteral(null), 'NULL');
    assert.throws(() => quoteLiteral(Number.NaN));
    assert.throws(() => quoteLiteral('a\0b'));
  });

  test('nested filter groups keep their logic', () => {
    const group = filterGroup.parse({
      logic: 'and',
      conditions: [
        { condition: { column: 'region', op: 'eq', value: 'EU' } },
        {
          group: {
            logic: 'or',
            conditions: [
              { condition: { column: 'total', op: 'gt', value: 100 } },
              { condition: { column: 'status', op: 'in', value: ['paid', 'shipped'] } },
              { condition: { column: 'deleted_at', op: 'is_null' } },
            ],
          },
        },
        { group: { logic: 'or', conditions: [] } },
      ],
    });
    assert.equal(
      filterSql(group, new Map()),
      `(t0."region" = 'EU' AND (t0."total" > 100 OR t0."status" IN ('paid', 'shipped') OR t0."deleted_at" IS NULL) AND TRUE)`,
    );
  });

  test('a dataset view selects only its columns, its join and its rows', async () => {
    const d = dataset.parse({
      namespace: 'eu_orders',
      source: { kind: 'postgres', name: 'demo', table: 'orders' },
      columns: ['id', 'customers.country'],
      filters: { logic: 'and', conditions: [{ condition: { column: 'region', op: 'eq', value: 'EU' } }] },
      joins: [
        {
          namespace: 'customers',
          on: 'orders.customer_id = customers.id',
          source: { kind: 'postgres', name: 'demo', table: 'customers' },
        },
      ],
    });
    const view = await datasetViewSql('req_x', d, async (s) => `"demo"."${s.table}"`);
    assert.equal(
      view,
      `CREATE VIEW "req_x"."eu_orders" WITH (security_barrier = true) AS SELECT t0."id" AS "id", t1."country" AS "customers_country" FROM "demo"."orders" AS t0 JOIN "demo"."customers" AS t1 ON t0."customer_id" = t1."id" WHERE (t0."region" = 'EU')`,
    );
    const undeclared = dataset.parse({ ...d, columns: ['other.secret'] });
    await assert.rejects(
      datasetViewSql('req_x', undeclared, async () => 'x'),
      /names no declared join/,
    );
  });

  test('results are capped by rows and bytes', () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, 'x'.repeat(10)]);
    assert.deepEqual(capRows(rows, { maxRows: 3, maxBytes: 1e6 }).truncated, true);
    assert.equal(capRows(rows, { maxRows: 3, maxBytes: 1e6 }).rows.length, 3);
    assert.equal(capRows(rows, { maxRows: 100, maxBytes: 40 }).rows.length, 2);
    assert.equal(capRows(rows, { maxRows: 10, maxBytes: 1e6 }).truncated, false);
    assert.deepEqual(capRows([[new Date(0), Buffer.from('hi'), 1n]], { maxRows: 1, maxBytes: 1e6 }).rows, [
      ['1970-01-01T00:00:00.000Z', '\\x6869', 1],
    ]);
    // Timestamps and dates from any driver's text, in Date#toISOString's form, without a Date each.
    const times = [
      '2025-06-01 05:00:00+00',
      '2025-06-01 05:00:00.123456+00',
      '2025-06-01 05:00:00.1+00',
      '2025-06-01 05:00:00',
      '2025-06-01',
      '2025-06-01 07:00:00+02',
      'infinity',
    ];
    assert.deepEqual(
      capRows(
        [times],
        { maxRows: 1, maxBytes: 1e6 },
        times.map(() => 'timestamptz'),
      ).rows[0],
      [
        '2025-06-01T05:00:00.000Z',
        '2025-06-01T05:00:00.123Z',
        '2025-06-01T05:00:00.100Z',
        '2025-06-01T05:00:00.000Z',
        '2025-06-01T00:00:00.000Z',
        '2025-06-01T05:00:00.000Z',
        null,
      ],
    );
    for (const t of times.slice(0, 4)) {
      assert.equal(isoTimestamp(t), new Date(`${t.replace(' ', 'T').replace(/\+00$/, '')}Z`).toISOString());
    }
    // int8 the same on every driver: a number when exact, text beyond 2^53.
    assert.deepEqual(
      capRows([['42', '9007199254740993', 2n ** 60n, 'x']], { maxRows: 1, maxBytes: 1e6 }, [
        'int8',
        'int8',
        'int8',
        'int8',
      ]).rows,
      [[42, '9007199254740993', '1152921504606846976', 'x']],
    );
  });
});
