// The input rules of docs/api.md ("Requests", "Errors"): a null in an optional member of any request body is the
// member left out, and every 400 names its field (part + dotted path) and says what was expected.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as z from 'zod';
import { checkShape, describeIssues, fieldName, MAX_NESTING } from '#shared/core/http/validation.ts';
import { isNullTolerant, nullAsAbsent, timeProblem } from '#shared/core/schemas/input-rules.ts';
import { observabilityEvent } from '#shared/devices/schemas.ts';
import { createRequestBody } from '#shared/requests/schemas.ts';
import { routeList } from '#shared/routes.ts';

/** Every object schema reachable from `schema` (through arrays, unions, wrappers, pipes, lazies, records). */
function objectsIn(schema: z.ZodType, seen = new Set<unknown>()): z.ZodObject[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  const walk = (...inner: unknown[]) =>
    inner.flatMap((s) => (s && typeof s === 'object' && '_zod' in s ? objectsIn(s as z.ZodType, seen) : []));
  switch (def.type) {
    case 'object':
      return [
        schema as z.ZodObject,
        ...walk(...Object.values(def.shape as Record<string, unknown>), def.catchall),
      ];
    case 'array':
      return walk(def.element);
    case 'union':
      return walk(...(def.options as unknown[]));
    case 'pipe':
      return walk(def.in, def.out);
    case 'lazy':
      return walk((def.getter as () => unknown)());
    case 'record':
      return walk(def.keyType, def.valueType);
    case 'intersection':
      return walk(def.left, def.right);
    case 'tuple':
      return walk(...(def.items as unknown[]), def.rest);
    default:
      return walk(def.innerType);
  }
}

describe('null in an optional member is the member left out', () => {
  test('every object of every route body is built with nullAsAbsent (new routes and fields included)', () => {
    const missing: string[] = [];
    let objects = 0;
    for (const [id, route] of routeList) {
      if (!route.body) continue;
      for (const object of objectsIn(route.body)) {
        objects++;
        if (!isNullTolerant(object)) missing.push(`${id}: {${Object.keys(object.shape).join(', ')}}`);
      }
    }
    assert.ok(objects > 20, `walked ${objects} body objects`);
    assert.deepEqual(
      missing,
      [],
      'build these request-body objects with nullAsAbsent (shared/core/schemas/input-rules.ts)',
    );
  });

  test('null and absence parse alike: defaults apply, optional members are left out, required ones still refuse', () => {
    const base = {
      event_time: '2026-01-15T09:30:00Z',
      agent_type: 'claude-code',
      mcp_name: 'github',
      tool: 'search_code',
      event_type: 'invocation',
      result: 'allowed',
    };
    const [event] = objectsIn(observabilityEvent);
    const nulls = Object.fromEntries(
      Object.keys(event?.shape ?? {})
        .filter((key) => !(key in base))
        .map((key) => [key, null]),
    );
    assert.ok(Object.keys(nulls).length >= 15);
    const withNulls = observabilityEvent.parse({ ...base, ...nulls });
    assert.deepEqual(withNulls, observabilityEvent.parse(base));
    assert.equal('model' in withNulls, false, 'the member is absent, not undefined');
    assert.deepEqual([withNulls.tokens_in, withNulls.skills, withNulls.metadata], [0, [], {}]);
    const required = observabilityEvent.safeParse({ ...base, tool: null });
    assert.equal(required.success, false);
    assert.match(
      describeIssues(required.error?.issues ?? [], 'body', { ...base, tool: null }),
      /^body\.tool: expected string, received null$/,
    );
  });

  test('the input is not changed; nulls inside free-form values are data', () => {
    const schema = nullAsAbsent(
      z.object({ a: z.string().optional(), meta: z.record(z.string(), z.unknown()).default({}) }).strict(),
    );
    const input = { a: null, meta: { kept: null } };
    assert.deepEqual(schema.parse(input), { meta: { kept: null } });
    assert.deepEqual(input, { a: null, meta: { kept: null } });
    const ignoring = nullAsAbsent(
      z.object({ a: z.string().optional(), id: z.unknown().optional() }).strict(),
      {
        ignore: ['id'],
      },
    );
    assert.deepEqual(ignoring.parse({ a: 'x', id: { any: 'thing' } }), { a: 'x' });
    assert.equal(ignoring.safeParse({ a: 'x', other: 1 }).success, false);
  });
});

describe('400 messages name the field and say what was expected', () => {
  const message = (schema: z.ZodType, value: unknown, part: 'body' | 'query' | 'path' = 'body') => {
    const result = schema.safeParse(value);
    assert.equal(result.success, false);
    return describeIssues(result.error?.issues ?? [], part, value);
  };

  test('field names: part, dotted members, [i] indices, quoted odd names', () => {
    assert.equal(fieldName('body', ['events', 3, 'tool']), 'body.events[3].tool');
    assert.equal(fieldName('query', ['limit']), 'query.limit');
    assert.equal(fieldName('path', ['id']), 'path.id');
    assert.equal(fieldName('body', []), 'body');
    assert.equal(fieldName('body', ['metadata', 'a b']), 'body.metadata["a b"]');
  });

  test('missing, wrong type, unknown member, formats', () => {
    const schema = z
      .object({ name: z.string(), id: z.uuid(), at: z.iso.datetime({ offset: true }) })
      .strict();
    assert.equal(
      message(schema, { id: 'x', at: 'monday', extra: 1, also: 2 }),
      'body.name: is required (expected string); body.id: expected a UUID; ' +
        'body.at: expected an RFC 3339 date-time with a zone, e.g. 2026-01-15T09:30:00Z; ' +
        'body.extra: is not a field of this request; body.also: is not a field of this request',
    );
    assert.equal(
      message(z.object({ limit: z.coerce.number().max(100) }), { limit: '500' }, 'query'),
      'query.limit: Too big: expected number to be <=100',
    );
  });

  test('unions: the branch the value was meant for, or the types accepted', () => {
    const scope = (condition: unknown) => ({
      title: 't',
      scope: {
        datasources: [
          {
            datasets: [
              {
                namespace: 'n',
                source: { kind: 'postgres', name: 'demo', table: 'orders' },
                columns: ['id'],
                filters: { conditions: [{ condition }] },
              },
            ],
          },
        ],
      },
    });
    const at = 'body.scope.datasources[0].datasets[0].filters.conditions[0].condition';
    assert.match(
      message(createRequestBody, scope({ column: 'x', op: 'near' })),
      new RegExp(`^${literal(at)}\\.op: Invalid option: expected one of "eq"`),
    );
    assert.equal(
      message(createRequestBody, scope({ column: 'x', op: 'eq', value: {} })),
      `${at}.value: expected one of: string, number, boolean, null, array`,
    );
  });

  test('a batch says which item is the first invalid one and how many are', () => {
    const batch = z.object({ events: z.array(z.object({ tool: z.string().max(3) })) });
    const value = {
      events: [{ tool: 'ok' }, { tool: 'ok' }, { tool: 'toolong' }, { tool: 'ok' }, { tool: 'waytoolong' }],
    };
    assert.equal(
      message(batch, value),
      'The first invalid item of events is events[2] (index 2; 2 of 5 invalid). ' +
        'body.events[2].tool: Too big: expected string to have <=3 characters; ' +
        'body.events[4].tool: Too big: expected string to have <=3 characters',
    );
  });
});

describe('what no route takes, whatever its schema (found by the fuzz, test/integration/core/fuzz.test.ts)', () => {
  test('checkShape: the first NUL or lone surrogate in document order, member names included', () => {
    assert.deepEqual(checkShape({ a: ['ok', { b: 'x\u0000' }], c: '\ud800' }), {
      path: ['a', 1, 'b'],
      problem: 'must not contain the NUL character (U+0000)',
    });
    assert.deepEqual(checkShape({ ok: '😀', 'k\udc00': 1 }), {
      path: ['k\udc00'],
      problem: 'must be valid Unicode: it holds a lone surrogate (U+DC00), which has no UTF-8 form',
    });
    assert.equal(checkShape({ a: ['😀', 'e\u0301', null, 1] }), undefined);
  });

  test('checkShape: nesting past MAX_NESTING, named by the first levels of its path, without a stack overflow', () => {
    const deep = (n: number) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);
    assert.equal(checkShape(deep(MAX_NESTING)), undefined);
    const past = checkShape({ x: deep(MAX_NESTING) });
    assert.deepEqual(past?.path, ['x', 0, 0, 0, 0, 0, 0, 0]);
    assert.match(String(past?.problem), /^nests deeper than 512 levels/);
    assert.ok(checkShape(deep(200_000)));
  });

  test('times: a real day, an offset PostgreSQL reads and a UTC year from 2 to 9998', () => {
    assert.equal(timeProblem('2026-01-15T09:30:00+15:59'), undefined);
    assert.equal(timeProblem('2026-01-15T09:30:00-16:00'), 'has a zone offset past ±15:59');
    for (const time of ['0000-01-01T00:00:00Z', '0002-01-01T00:30:00+01:00', '9999-01-01T00:00:00Z'])
      assert.equal(timeProblem(time), 'must be between 0002-01-01 and 9998-12-31 (UTC)', time);
    assert.equal(timeProblem('9998-12-31T23:59:59Z'), undefined);
    assert.equal(timeProblem('2026-02-30T00:00:00Z'), 'is not a real date');
    assert.equal(timeProblem('2028-02-29T00:00:00Z'), undefined);
    assert.equal(timeProblem('2100-02-29T00:00:00Z'), 'is not a real date');
    assert.equal(timeProblem('not a time'), undefined, 'the syntax is checked by its schema');
  });
});

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
