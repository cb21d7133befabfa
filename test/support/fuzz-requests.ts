// Requests derived from the OpenAPI document, for the fuzz (test/integration/core/fuzz.test.ts, a bounded run in npm test)
// and its benchmark (test/bench/fuzz.ts, npm run bench:fuzz). For every operation, a request that is valid by the
// document's schemas (components/schemas resolved), carrying real credentials (an admin's token on admin routes, a
// user's on user routes, a signature over the very bytes sent on device routes) and mixing in ids and values that
// exist, so that it gets past authentication and lookups; then one part of it is broken: a member of the body of the
// wrong type, missing, extra, an odd string or number, deep nesting, a body that is not JSON or not an object, an odd
// content type, a query value, a path id, a header. Each answer is judged by runCase: no 5xx, each 4xx exactly
// {error, message}, the status and body as the document says (test/support/contract.ts), and a refused request
// stores nothing (row counts of the main tables before and after it).
import { Agent, request as httpRequest } from 'node:http';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { DeviceIdentity } from '#agent/identity.ts';
import { canonicalize } from '#shared/core/canonical-json.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { isUtf8Charset, mediaType } from '#shared/core/http/content-type.ts';
import { firstInvalidUtf8 } from '#shared/core/http/utf8.ts';
import { fieldName } from '#shared/core/http/validation.ts';
import { buildOpenApi } from '#shared/meta/openapi.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { enrolledDevice, hardware, invocationEvent, rawSign } from './device-requests.ts';
import { demoOrdersRequest } from './request-fixtures.ts';
import type { TestService } from './service.ts';

// ---------------------------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------------------------

export type Schema = Record<string, unknown>;
export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Schema;
}
/** One operation of the document, as the walkers need it. */
export interface Operation {
  operationId: string;
  /** Upper case. */
  method: string;
  template: string;
  /** Its x-auth: public, user, admin, device, device+user. */
  auth: string;
  parameters: Parameter[];
  /** The schema of its JSON request body, if it takes one. */
  body: Schema | undefined;
  /** The statuses it documents. */
  statuses: string[];
}

interface DocumentOperation {
  operationId: string;
  'x-auth': string;
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, unknown>;
}
const openApi = buildOpenApi() as {
  paths: Record<string, Record<string, DocumentOperation>>;
  components: { schemas: Record<string, Schema> };
};

/** A schema with its $ref (into components/schemas) followed. */
const resolve = (schema: Schema): Schema => {
  const ref = schema.$ref as string | undefined;
  return ref ? resolve(openApi.components.schemas[ref.split('/').pop() as string] as Schema) : schema;
};

/** Every operation of the document. */
export const operations: readonly Operation[] = Object.entries(openApi.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    operationId: op.operationId,
    method: method.toUpperCase(),
    template,
    auth: op['x-auth'],
    parameters: op.parameters ?? [],
    body: op.requestBody?.content['application/json'].schema,
    statuses: Object.keys(op.responses),
  })),
);

export const isDeviceRoute = (op: Operation) => op.auth === 'device' || op.auth === 'device+user';

/** Members of a device body that are the signature's envelope, not the request's fields. */
const ENVELOPE = ['certificate', 'clientTimestamp', 'signature'];

/** Every path in a body schema that can hold a string, as the key path to it ([] is the body itself). */
export function stringPaths(schema: Schema, path: PropertyKey[] = [], depth = 0): PropertyKey[][] {
  const s = resolve(schema);
  if (depth > 6) return [];
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return branches.flatMap((b) => stringPaths(b, path, depth + 1)).slice(0, 40);
  const type = s.type;
  if (type === 'object' || s.properties) {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const own = Object.entries(properties).flatMap(([key, p]) => stringPaths(p, [...path, key], depth + 1));
    // An open record (metadata): a member of its own.
    return s.additionalProperties && typeof s.additionalProperties === 'object'
      ? [...own, [...path, 'note']]
      : own;
  }
  if (type === 'array') return stringPaths((s.items ?? {}) as Schema, [...path, 0], depth + 1);
  if (type === 'string' || type === undefined || (Array.isArray(type) && type.includes('string')))
    return [path];
  return [];
}

/** `body.events[0].tool`: the part of the request, then the path in it (as validation_failed names fields). */
export const fieldText = (part: string, path: readonly PropertyKey[]) =>
  part + path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${String(k)}`)).join('');

// ---------------------------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------------------------

/** JSON text put into a body as it is: what JSON.stringify cannot write (1e400, -0, deep nesting, __proto__). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  [fc.toStringMethod](): string {
    return `raw(${short(this.text)})`;
  }
}

const short = (text: string, max = 80) =>
  text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;

/** A JSON value that may hold RawJson, as text. */
function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : jsonText(v))).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const repeat = (unit: string) => (n: number) => unit.repeat(n);
const DAY = 86_400_000;

/** Strings a validator, a database or a serializer may choke on. */
const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 201, max: 120_000 }).map(repeat('a')),
  fc.integer({ min: 1, max: 20_000 }).map(repeat('é😀')),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 20 }),
  // Lone surrogates: JSON.stringify writes them as \ud800-style escapes, which JSON.parse turns back into them.
  fc.constantFrom('\ud800', 'a\udfffb', '\udc00\ud800', `${'x'.repeat(100)}\udbff`),
  // RFC 3339 times anywhere in years 0000 to 9999, with any offset up to ±23:59.
  fc
    .tuple(
      fc.date({
        min: new Date('0000-01-01T00:00:00Z'),
        max: new Date('9999-12-31T23:59:59Z'),
        noInvalidDate: true,
      }),
      fc.constantFrom('Z', '+'),
      fc.integer({ min: -(24 * 60 - 1), max: 24 * 60 - 1 }),
    )
    .map(([date, zone, minutes]) => {
      const local = date.toISOString().slice(0, 19);
      if (zone === 'Z') return `${local}Z`;
      const abs = Math.abs(minutes);
      return `${local}${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
    }),
  fc.constantFrom(
    '',
    ' ',
    '\t\r\n',
    'NaN',
    'Infinity',
    '-Infinity',
    '-0',
    '1e309',
    '0x1F',
    '9'.repeat(400),
    '-1',
    'null',
    'true',
    'undefined',
    '[]',
    '{}',
    '%00',
    '%ZZ',
    '\\u0000',
    '\u0000',
    '\u202e\u0000rtl',
    '\ufeffbom',
    'e\u0301',
    '\u{10ffff}',
    "' OR 1=1 --",
    "'; DROP TABLE users; --",
    '$1',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    '2026-13-45T25:61:61Z',
    '0000-00-00T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '-271821-04-20T00:00:00Z',
    '2026-01-15T09:30:00+99:99',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '2026-01-01T00:00:00-23:59',
    '9999-12-31T23:59:59-12:00',
    '2026-02-30T00:00:00Z',
    '2100-02-29T12:00:00+01:00',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
    'http://[::1',
    'javascript:alert(1)',
  ),
);

/** Numbers at and past the edges, some only writable as raw JSON text. */
const oddNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    -1,
    0.5,
    -0.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53 + 2,
    2 ** 63,
    -(2 ** 63),
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    1e21,
    new RawJson('1e400'),
    new RawJson('-1e400'),
    new RawJson('1e-400'),
    new RawJson('-0'),
    new RawJson('123456789012345678901234567890'),
    new RawJson('1.0'),
    new RawJson('1E2'),
  ),
  fc.double(),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
  fc.bigInt({ min: -(1n << 90n), max: 1n << 90n }).map((n) => new RawJson(n.toString())),
);

/** Nesting far past any schema's depth. */
const deepValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: 2, max: 20_000 }).map((n) => new RawJson(`${'['.repeat(n)}${']'.repeat(n)}`)),
  fc.integer({ min: 2, max: 20_000 }).map((n) => new RawJson(`${'{"a":'.repeat(n)}1${'}'.repeat(n)}`)),
  fc.integer({ min: 2, max: 5_000 }).map((n) => Array.from({ length: n }, () => 0)),
);

/** A value of some other type than the schema's. */
const anyOtherValue: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  null,
  true,
  false,
  0,
  '',
  'x',
  [],
  {},
  [null],
  [[]],
  { '': null },
  [{}],
  new RawJson('{"__proto__":{"admin":true}}'),
);

/** Anything odd: the mutation of one value. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: oddString, weight: 4 },
  { arbitrary: oddNumber, weight: 2 },
  { arbitrary: anyOtherValue, weight: 1 },
  {
    arbitrary: fc.constantFrom(
      new RawJson('{"constructor":{"prototype":{"x":1}}}'),
      new RawJson('{"a":1,"a":2}'),
    ),
    weight: 1,
  },
  { arbitrary: deepValue, weight: 1 },
);

/** Member names that are not a field of any request, or are in odd ways. */
const extraKey = fc.oneof(
  fc.constantFrom(
    'unknown',
    '',
    ' ',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '$where',
    'a.b',
    'id',
    'created_at',
    'signature',
    'clientTimestamp',
    'certificate',
    '\u0000',
    '\ud800',
    'é',
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
);

// ---------------------------------------------------------------------------------------------------------------
// Valid values from a schema
// ---------------------------------------------------------------------------------------------------------------

/** Values that exist in the world, by member or parameter name: mixed into what a schema generates. */
export type Known = Record<string, readonly unknown[]>;

const MAX_DEPTH = 7;
const SIMPLE_CLASS = /^\^(\[[^\]]+\])\+\$$/;
const LOOKS_LIKE_TIME = /\\d\{4\}-\\d\{2\}-\\d\{2\}/;

const recentTime = fc
  .integer({ min: -6 * DAY, max: 60_000 })
  .map((ms) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString());

function stringValue(s: Schema): fc.Arbitrary<string> {
  const min = (s.minLength as number | undefined) ?? 0;
  const max = Math.min((s.maxLength as number | undefined) ?? 24, Math.max(min, 24));
  const pattern = s.pattern as string | undefined;
  if (s.format === 'date-time' || (pattern && LOOKS_LIKE_TIME.test(pattern))) return recentTime;
  if (s.format === 'uuid') return fc.uuid({ version: 4 });
  if (s.format === 'email') return fc.stringMatching(/^[a-z0-9]{1,12}$/).map((l) => `${l}@example.test`);
  if (s.format === 'uri') return fc.constantFrom('https://tickets.example.test/T-1');
  if (pattern) {
    const simple = SIMPLE_CLASS.exec(pattern);
    if (simple) {
      const unit = fc.stringMatching(new RegExp(`^${simple[1]}$`));
      return fc.string({ unit, minLength: Math.max(min, 1), maxLength: max });
    }
    return fc
      .stringMatching(new RegExp(pattern), { maxLength: (s.maxLength as number | undefined) ?? 200 })
      .filter((v) => v.length >= min);
  }
  return fc.string({ minLength: Math.max(min, 0), maxLength: Math.max(min, Math.min(max, 16)) });
}

/** A value valid by `schema` (mostly: the service checks more than the document says, such as ranges of times). */
function validValue(schema: Schema, known: Known, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema);
  const own = bareValue(s, known, depth);
  const hints = name ? known[name] : undefined;
  return hints?.length ? fc.oneof({ arbitrary: fc.constantFrom(...hints), weight: 3 }, own) : own;
}

function bareValue(s: Schema, known: Known, depth: number): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    // Deep in a recursive schema (filter groups), the branches that do not recurse.
    const usable = depth > MAX_DEPTH ? branches.filter((b) => !JSON.stringify(b).includes('$ref')) : branches;
    const picked = usable.length ? usable : branches.filter((b) => b.type === 'null');
    return fc.oneof(
      ...picked.map((b) => ({
        arbitrary: validValue(b, known, '', depth + 1),
        weight: b.type === 'null' ? 1 : 4,
      })),
    );
  }
  const type = Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      return stringValue(s);
    case 'integer': {
      const exclusive = s.exclusiveMinimum as number | undefined;
      const min = (s.minimum as number | undefined) ?? (exclusive === undefined ? 0 : exclusive + 1);
      return fc.integer({ min, max: Math.min((s.maximum as number | undefined) ?? min + 1000, min + 1000) });
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = (s.minItems as number | undefined) ?? 0;
      const maxLength =
        depth > MAX_DEPTH ? minLength : Math.min((s.maxItems as number | undefined) ?? 3, minLength + 2);
      return fc.array(validValue((s.items ?? {}) as Schema, known, '', depth + 1), { minLength, maxLength });
    }
  }
  if (type === 'object' || s.properties) {
    const properties = Object.entries((s.properties ?? {}) as Record<string, Schema>).filter(
      ([, p]) => !p.readOnly,
    );
    const required = (s.required as string[] | undefined) ?? [];
    const extra = s.additionalProperties;
    if (!properties.length && extra && typeof extra === 'object' && Object.keys(extra).length) {
      return fc.dictionary(
        fc.stringMatching(/^[a-z]{1,8}$/),
        validValue(extra as Schema, known, '', depth + 1),
        {
          maxKeys: 3,
        },
      );
    }
    if (!properties.length) return fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), freeJson, { maxKeys: 3 });
    return fc.record(
      Object.fromEntries(properties.map(([key, p]) => [key, validValue(p, known, key, depth + 1)])),
      { requiredKeys: required.filter((k) => properties.some(([key]) => key === k)) },
    );
  }
  // No type: free-form JSON (a catalog schema).
  return freeJson;
}

const freeJson = fc.jsonValue({ maxDepth: 2 });

// ---------------------------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------------------------

/** What the service has and who calls it: the credentials and the ids and values that exist. */
export interface FuzzWorld {
  svc: TestService;
  admin: string;
  user: string;
  identity: DeviceIdentity;
  /** Ids that exist, by the path segment before the parameter (requests, devices, events, sessions, catalog). */
  ids: Record<string, string[]>;
  /**
   * Ids by operationId, before `ids`: the transitions (approve, deny, revoke, provision) work on requests of their
   * own, so that the pending and the active request of `ids` stay so for the other operations (the query proxy).
   */
  opIds: Record<string, string[]>;
  known: Known;
  /** Bodies known to be accepted, by operationId: bases for a mutation besides those generated from the schema. */
  examples: Record<string, unknown[]>;
}

/** One request of the fuzz: a valid request for an operation, and what was changed in it. */
export interface FuzzCase {
  op: Operation;
  /** What was broken, in words (`body.events[0].tool := 1e400`). */
  mutation: string;
  /** Path parameters, already percent-encoded. */
  path: Record<string, string>;
  /** The query string, without `?`, already encoded. */
  query: string;
  headers: Record<string, string>;
  /** The content type (null: no header); undefined: application/json when there is a body. */
  contentType?: string | null;
  /**
   * The body as a value (may hold RawJson), with `rawBytes` (bytes that are not UTF-8) put into the string at their
   * path as they are; or, as `text`, exactly the bytes to send.
   */
  body?:
    | { value: unknown; rawBytes?: { path: Path; bytes: readonly number[] } }
    | { text: string; latin1?: boolean };
  /** What the answer must be, when the case knows (raw bytes, a charset): its status and error code. */
  expect?: { status: number; error: string; message?: RegExp };
}

const render = (c: FuzzCase): string => {
  const body =
    c.body === undefined
      ? ''
      : ` body ${short('text' in c.body ? JSON.stringify(c.body.text) : jsonText(c.body.value), 300)}${
          'rawBytes' in c.body && c.body.rawBytes
            ? ` with bytes ${Buffer.from(c.body.rawBytes.bytes).toString('hex')} at ${fieldText('body', c.body.rawBytes.path)}`
            : ''
        }`;
  const type = c.contentType === undefined ? '' : ` content-type ${JSON.stringify(c.contentType)}`;
  return `${c.op.method} ${short(concretePath(c), 300)}  [${short(c.mutation, 200)}]${type}${body}`;
};

function concretePath(c: Pick<FuzzCase, 'op' | 'path' | 'query'>): string {
  const path = c.op.template.replace(/\{(\w+)\}/g, (_, name: string) => c.path[name] ?? '');
  return c.query ? `${path}?${c.query}` : path;
}

const caseOf = (c: FuzzCase): FuzzCase =>
  Object.assign(c, { [fc.toStringMethod]: () => render(c) }) as FuzzCase;

type Path = Array<string | number>;

/** Every place in a value: [] is the value itself. */
function placesIn(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (out.length > 200) return out;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) placesIn(v, [...path, i], out);
  } else if (value && typeof value === 'object' && !(value instanceof RawJson))
    for (const [k, v] of Object.entries(value)) placesIn(v, [...path, k], out);
  return out;
}

function setAt(value: unknown, path: Path, replace: (old: unknown) => unknown): unknown {
  if (!path.length) return replace(value);
  const [head, ...rest] = path as [string | number, ...Path];
  if (Array.isArray(value))
    return value.map((v, i) => (i === head ? setAt(v, rest, replace) : v)).filter((v) => v !== REMOVED);
  const object = { ...(value as Record<string, unknown>) };
  const next = setAt(object[head], rest, replace);
  if (next === REMOVED) delete object[head];
  else object[head] = next;
  return object;
}
const REMOVED = Symbol('removed');

const mutated = (base: FuzzCase, change: Partial<FuzzCase> & { mutation: string }): FuzzCase =>
  caseOf({ ...base, ...change });

/** A valid request for `op` (mostly): path ids and values that exist, a body from its schema or an example. */
function validCase(op: Operation, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const segments = op.template.split('/');
  const path = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const before = segments[segments.indexOf(`{${p.name}}`) - 1] ?? '';
        const ids = world.opIds[op.operationId] ?? world.ids[before];
        return [
          p.name,
          ids?.length ? fc.constantFrom(...ids) : (stringValue(p.schema) as fc.Arbitrary<unknown>),
        ];
      }),
    ),
  );
  // A cursor is opaque (checksummed, bound to its filters): none can be made from its schema, so a valid request has
  // none; the mutations still send odd ones.
  const query = fc.record(
    Object.fromEntries(
      queryParams
        .filter((p) => p.name !== 'cursor')
        .map((p) => [p.name, validValue(p.schema, world.known, p.name)]),
    ),
    { requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name) },
  );
  let body: fc.Arbitrary<unknown> = fc.constant(undefined);
  if (op.body) {
    const schema = resolve(op.body);
    // The envelope of a signed device request is added when it is sent (signed over the bytes sent).
    const own = isDeviceRoute(op)
      ? {
          ...schema,
          properties: Object.fromEntries(
            Object.entries(schema.properties as Record<string, Schema>).filter(
              ([k]) => !ENVELOPE.includes(k),
            ),
          ),
          required: (schema.required as string[]).filter((k) => !ENVELOPE.includes(k)),
        }
      : schema;
    const examples = world.examples[op.operationId] ?? [];
    body = examples.length
      ? fc.oneof(validValue(own, world.known), fc.constantFrom(...examples))
      : validValue(own, world.known);
  }
  const headers = op.parameters.filter((p) => p.in === 'header');
  const headerValues = fc.record(Object.fromEntries(headers.map((p) => [p.name, stringValue(p.schema)])), {
    requiredKeys: headers.filter((p) => p.required).map((p) => p.name),
  });
  return fc.record({ path, query, body, headers: headerValues }).map(({ path, query, body, headers }) =>
    caseOf({
      op,
      mutation: 'none',
      path: Object.fromEntries(Object.entries(path).map(([k, v]) => [k, encodeURIComponent(String(v))])),
      query: new URLSearchParams(
        Object.entries(query).map(([k, v]) => [k, String(v)] as [string, string]),
      ).toString(),
      headers: headers as Record<string, string>,
      ...(body === undefined ? {} : { body: { value: body } }),
    }),
  );
}

/** Bodies that are not JSON, or JSON that is not an object, or not quite JSON. */
const badBodyText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '{',
    '}',
    '{"a":}',
    '{"a":1,}',
    "{'a':1}",
    '{"a" 1}',
    '{"a":01}',
    '{"a":.5}',
    '{"a":+1}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '{"a":"unterminated}',
    '{"a":"tab\there"}',
    '{"a":1}{"b":2}',
    '{"a":1} trailing',
    '/* comment */ {}',
    '\ufeff{}',
    '\u0000',
    'nul',
    'undefined',
    'NaN',
    'null',
    'true',
    '0',
    '-1e400',
    '"text"',
    '"\\ud800"',
    '[]',
    '[{}]',
    '[1,]',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.integer({ min: 1, max: 100_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
);

const CONTENT_TYPES = [
  null,
  '',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'image/png',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'application/problem+json; charset=utf-8',
  'application/jsonx',
  'application/json;;;',
  'application/json, text/plain',
  'json',
  '*/*',
];

/** encodeURIComponent, except that a lone surrogate is written as its 3 bytes (WTF-8), which are not UTF-8. */
function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0xd800 || cp > 0xdfff) out += encodeURIComponent(ch);
    else
      for (const byte of [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)])
        out += `%${byte.toString(16).toUpperCase()}`;
  }
  return out;
}

/** Path segments that are no id: encoded or, as `raw`, sent as they are. */
const badSegment: fc.Arbitrary<{ raw: string }> = fc.oneof(
  // At most 6,000 bytes: the request line of a gateway (and of node:http) has a bound of its own.
  oddString.map((s) => ({ raw: percentEncode(s.slice(0, 1500)).slice(0, 6000) })),
  fc
    .constantFrom(
      '%ZZ',
      '%',
      '%E0%A4%A',
      '%C0%AF',
      '%FF%FE',
      '%ED%A0%80',
      '%00',
      '%2F',
      '%2e%2e',
      '..',
      '.',
      '-1',
      '0',
      '99999999999999999999999',
      '9223372036854775808',
      '1e3',
      '0x10',
      '%20',
      '+',
      '00000000-0000-0000-0000-00000000000g',
      '00000000000000000000000000000000',
      '{00000000-0000-4000-8000-000000000000}',
      'urn:uuid:00000000-0000-4000-8000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '00000000-0000-4000-8000-000000000000',
    )
    .map((raw) => ({ raw })),
  fc.integer({ min: 201, max: 2000 }).map((n) => ({ raw: 'a'.repeat(n) })),
);

/** Query values, encoded, or raw (bad percent-encoding, repeats, separators). */
const badQueryValue: fc.Arbitrary<{ raw: string }> = fc.oneof(
  oddString.map((s) => ({ raw: percentEncode(s.slice(0, 3000)).slice(0, 6000) })),
  fc
    .constantFrom('%ZZ', '%', '%C0%AF', '%FF', '%00', '+', '%2B', '&', '=', '==', ';', '%26x%3D1')
    .map((raw) => ({ raw })),
  oddNumber.map((n) => ({ raw: encodeURIComponent(jsonText(n)) })),
);

/** What a header may carry on the wire: tab, visible ASCII and the upper half of Latin-1. */
const latin1Header = fc.string({
  unit: fc.oneof(
    fc.constant('\t'),
    fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
  ),
  maxLength: 20,
});

/** Byte sequences that are not UTF-8: the classic faults, and random bytes that hold one. */
export const notUtf8: fc.Arbitrary<readonly number[]> = fc.oneof(
  fc.constantFrom(
    [0xff],
    [0xfe, 0xff],
    [0x80],
    [0xc3],
    [0xc3, 0x28],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xf0, 0x90, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xf8, 0x88, 0x80, 0x80, 0x80],
  ),
  // Random bytes that hold a fault, and none that would end the JSON string they are in (a control character, a
  // quote, a backslash): the string is what the answer must name.
  fc
    .uint8Array({ minLength: 1, maxLength: 12 })
    .filter((b) => firstInvalidUtf8(b) !== undefined && b.every((x) => x >= 0x20 && x !== 0x22 && x !== 0x5c))
    .map((b) => [...b]),
);

/** `base` with `bytes` put, as they are, into a string at `path` of its body (the place replaced by that string). */
export function withRawBytes(base: FuzzCase, value: unknown, path: Path, bytes: readonly number[]): FuzzCase {
  return mutated(base, {
    mutation: `${fieldText('body', path)} holds bytes ${Buffer.from(bytes).toString('hex')}`,
    body: { value: setAt(value, path, () => RAW_BYTES_MARK), rawBytes: { path, bytes } },
    expect: {
      status: 400,
      error: 'validation_failed',
      message: new RegExp(`^${escapeRegExp(fieldName('body', path))}: is not valid UTF-8 \\(byte 0x`),
    },
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A string no generated value holds: where the raw bytes go in the JSON text. */
const RAW_BYTES_MARK = 'raw-bytes-0c8f3e';

/** A valid request for `op`, the same for a given seed. */
export const sampleCase = (op: Operation, world: FuzzWorld, seed = 1): FuzzCase =>
  (fc.sample(validCase(op, world), { seed, numRuns: 1 }) as [FuzzCase])[0];

/**
 * For an operation that takes a body: a valid request (the same for a given seed) with `bytes` put into the first
 * string of its body (the body itself when it holds none), expecting 400 naming that string.
 */
export function rawBytesCase(op: Operation, world: FuzzWorld, bytes: readonly number[], seed = 1): FuzzCase {
  const base = sampleCase(op, world, seed);
  const value = base.body && 'value' in base.body ? base.body.value : {};
  const at = (path: Path) =>
    path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
  const place = placesIn(value).find((path) => typeof at(path) === 'string') ?? [];
  return withRawBytes(base, value, place, bytes);
}

/** A body declared in a charset other than UTF-8: 415 on a route that takes a body and lists it, else 400. */
function charsetExpectation(op: Operation, contentType: string | null): Pick<FuzzCase, 'expect'> {
  const charset = contentType === null ? undefined : mediaType(contentType)?.params.charset;
  if (charset === undefined || isUtf8Charset(charset)) return {};
  return {
    expect: { status: op.statuses.includes('415') ? 415 : 400, error: 'unsupported_charset' },
  };
}

/** One request for `op` with one part of it broken (or, now and then, nothing). */
export function caseArbitrary(op: Operation, world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return validCase(op, world).chain((base) => {
    const options: Array<fc.WeightedArbitrary<FuzzCase>> = [{ arbitrary: fc.constant(base), weight: 1 }];
    const add = (weight: number, arbitrary: fc.Arbitrary<FuzzCase>) => options.push({ arbitrary, weight });
    const pathNames = Object.keys(base.path);
    const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
    const value = base.body && 'value' in base.body ? base.body.value : undefined;

    if (op.body) {
      const places = placesIn(value);
      const at = fc.constantFrom(...places);
      add(
        6,
        fc.tuple(at, oddValue).map(([path, v]) =>
          mutated(base, {
            mutation: `${fieldText('body', path)} := ${short(fc.stringify(v), 120)}`,
            body: { value: setAt(value, path, () => v) },
          }),
        ),
      );
      add(
        3,
        fc.tuple(at, anyOtherValue).map(([path, v]) =>
          mutated(base, {
            mutation: `${fieldText('body', path)} := ${short(fc.stringify(v), 120)}`,
            body: { value: setAt(value, path, () => v) },
          }),
        ),
      );
      const members = places.filter((p) => p.length > 0);
      if (members.length) {
        add(
          3,
          fc.constantFrom(...members).map((path) =>
            mutated(base, {
              mutation: `delete ${fieldText('body', path)}`,
              body: { value: setAt(value, path, () => REMOVED) },
            }),
          ),
        );
      }
      const objects = places.filter((p) => {
        let v: unknown = value;
        for (const k of p) v = (v as Record<string | number, unknown>)[k];
        return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);
      });
      if (objects.length) {
        add(
          3,
          fc
            .tuple(fc.constantFrom(...objects), extraKey, fc.oneof(validValue({}, {}), oddValue))
            .map(([path, key, v]) =>
              mutated(base, {
                mutation: `${fieldText('body', [...path, key])} := ${short(fc.stringify(v), 120)} (extra)`,
                body: { value: setAt(value, path, (o) => ({ ...(o as object), [key]: v })) },
              }),
            ),
        );
      }
      add(
        2,
        badBodyText.map((text) =>
          mutated(base, { mutation: `body text ${fc.stringify(short(text))}`, body: { text } }),
        ),
      );
      add(
        1,
        fc
          .constantFrom('{"a":"\xff\xfe"}', '\xc3\x28', '{"title":"\xed\xa0\x80"}', '\xef\xbb\xbf{}')
          .map((text) => mutated(base, { mutation: 'body bytes not UTF-8', body: { text, latin1: true } })),
      );
      // Bytes that are not UTF-8, sent as they are inside a string of a valid body: 400 naming that string.
      add(
        4,
        fc.tuple(at, notUtf8).map(([path, bytes]) => withRawBytes(base, value, path, bytes)),
      );
      add(
        2,
        fc.constantFrom(...CONTENT_TYPES).map((contentType) =>
          mutated(base, {
            mutation: `content-type ${JSON.stringify(contentType)}`,
            contentType,
            ...charsetExpectation(op, contentType),
          }),
        ),
      );
      // The body left out (an optional one may be: the approve notes, the revoke reason).
      add(1, fc.constant(mutated(base, { mutation: 'no body', body: { text: '' } })));
    } else {
      // A route that takes no body ignores one (docs/api.md, "Requests"), but for a charset it does not take.
      add(
        1,
        fc
          .tuple(fc.oneof(badBodyText, fc.constant('{"a":1}')), fc.constantFrom(...CONTENT_TYPES))
          .map(([text, contentType]) =>
            mutated(base, {
              mutation: `unexpected body ${fc.stringify(short(text))}`,
              body: { text },
              contentType,
              ...(text ? charsetExpectation(op, contentType) : {}),
            }),
          ),
      );
    }
    if (queryNames.length) {
      add(
        4,
        fc.tuple(fc.constantFrom(...queryNames), badQueryValue).map(([name, { raw }]) =>
          mutated(base, {
            mutation: `query.${name} := ${short(raw)}`,
            query: [
              ...base.query.split('&').filter((kv) => kv && !kv.startsWith(`${name}=`)),
              `${name}=${raw}`,
            ].join('&'),
          }),
        ),
      );
      add(
        1,
        fc.tuple(fc.constantFrom(...queryNames), fc.string({ maxLength: 10 })).map(([name, v]) =>
          mutated(base, {
            mutation: `query.${name} repeated`,
            query: [base.query, `${name}=${encodeURIComponent(v)}`, `${name}=${encodeURIComponent(v)}x`]
              .filter(Boolean)
              .join('&'),
          }),
        ),
      );
    }
    add(
      1,
      fc.tuple(extraKey, badQueryValue).map(([key, { raw }]) =>
        mutated(base, {
          mutation: `query.${key} (unknown)`,
          query: [base.query, `${percentEncode(key)}=${raw}`].filter(Boolean).join('&'),
        }),
      ),
    );
    if (pathNames.length) {
      add(
        5,
        fc
          .tuple(fc.constantFrom(...pathNames), badSegment)
          .map(([name, { raw }]) =>
            mutated(base, { mutation: `path.${name} := ${short(raw)}`, path: { ...base.path, [name]: raw } }),
          ),
      );
    }
    // The request id a client may choose (docs/api.md, "Request ids"), echoed in the answer's x-request-id.
    add(
      1,
      fc.oneof(fc.constantFrom('', ' ', 'é', '\u00ff', 'a'.repeat(5000), 'a,b'), latin1Header).map((v) =>
        mutated(base, {
          mutation: `header x-request-id := ${JSON.stringify(short(v))}`,
          headers: { ...base.headers, 'x-request-id': v },
        }),
      ),
    );
    for (const header of op.parameters.filter((p) => p.in === 'header')) {
      add(
        2,
        fc
          .oneof(
            fc.constantFrom(
              '',
              ' ',
              'a b',
              '\t',
              'é',
              '\u00ff',
              'a'.repeat(201),
              'a'.repeat(5000),
              'key,key',
            ),
            latin1Header,
          )
          .map((v) =>
            mutated(base, {
              mutation: `header ${header.name} := ${JSON.stringify(short(v))}`,
              headers: { ...base.headers, [header.name]: v },
            }),
          ),
      );
    }
    return fc.oneof(...options);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Sending and judging
// ---------------------------------------------------------------------------------------------------------------

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** The bytes on the wire for a case: credentials added, a device request signed over what is sent. */
function wireRequest(c: FuzzCase, world: FuzzWorld): WireRequest {
  const headers: Record<string, string> = { ...c.headers };
  const token =
    c.op.auth === 'admin'
      ? world.admin
      : c.op.auth === 'user' || c.op.auth === 'device+user'
        ? world.user
        : undefined;
  if (token) headers.authorization = `Bearer ${token}`;
  let text: string | undefined;
  let latin1 = false;
  let rawBytes: readonly number[] | undefined;
  if (c.body && 'text' in c.body) {
    text = c.body.text;
    latin1 = c.body.latin1 ?? false;
  } else if (c.body) {
    rawBytes = c.body.rawBytes?.bytes;
    let value = c.body.value;
    if (
      isDeviceRoute(c.op) &&
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      !(value instanceof RawJson)
    ) {
      value = {
        certificate: world.identity.certificatePem,
        clientTimestamp: new Date().toISOString(),
        ...(value as object),
      };
    }
    text = jsonText(value);
  }
  if (isDeviceRoute(c.op) && text !== undefined && c.op.auth !== 'device') {
    text = withBodySignature(text, world.identity);
  }
  const body = text === undefined ? undefined : bytesOf(text, latin1, rawBytes);
  // Signed over the very bytes sent (the protocol's fast path), so that any JSON text reaches validation.
  if (isDeviceRoute(c.op) && body && c.op.auth === 'device') {
    headers['x-device-signature'] = rawSign(world.identity, body);
  }
  if (text !== undefined) {
    if (c.contentType === undefined) headers['content-type'] = 'application/json';
    else if (c.contentType !== null) headers['content-type'] = c.contentType;
  }
  return { method: c.op.method, path: concretePath(c), headers, ...(body ? { body } : {}) };
}

/** The bytes of a body's text: UTF-8 (or Latin-1), with `rawBytes` in place of the mark where there is one. */
function bytesOf(text: string, latin1: boolean, rawBytes: readonly number[] | undefined): Buffer {
  const encoding = latin1 ? 'latin1' : 'utf8';
  const at = rawBytes ? text.indexOf(RAW_BYTES_MARK) : -1;
  if (at < 0) return Buffer.from(text, encoding);
  return Buffer.concat([
    Buffer.from(text.slice(0, at), encoding),
    Buffer.from(rawBytes as readonly number[]),
    Buffer.from(text.slice(at + RAW_BYTES_MARK.length), encoding),
  ]);
}

/** Register: the signature is a member of the body, over the canonical body without it. */
function withBodySignature(text: string, identity: DeviceIdentity): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || 'signature' in parsed) return text;
  let signature = 'AAAA';
  try {
    signature = rawSign(identity, Buffer.from(canonicalize(parsed), 'utf8'));
  } catch {
    // No canonical form (a lone surrogate, 1e400, nesting past the stack): no signature can verify.
  }
  return `${text.slice(0, text.lastIndexOf('}'))}${text.trim() === '{}' ? '' : ','}"signature":${JSON.stringify(signature)}}`;
}

export interface Answer {
  status: number;
  text: string;
  requestId: string | null;
  location: string | undefined;
}

function sendWire(baseUrl: string, wire: WireRequest): Promise<Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: wire.method,
        path: wire.path,
        headers: { ...wire.headers, ...(wire.body ? { 'content-length': String(wire.body.length) } : {}) },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            requestId: (res.headers['apigw-requestid'] as string | undefined) ?? null,
            location: res.headers.location,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(wire.body);
  });
}

/** The main tables (shared/core/db/schema.ts): what a refused request must leave as it was. */
const COUNTED_TABLES = [
  'users',
  'devices',
  'device_certificates',
  'device_signatures',
  'inventory_agents',
  'inventory_mcps',
  'inventory_changes',
  'observability_events',
  'requests',
  'request_usage_events',
  'catalog_entries',
  'audit_logs',
  'cli_signins',
] as const;
export type Counts = Record<(typeof COUNTED_TABLES)[number], number>;

const COUNT_SQL = sql.raw(
  `SELECT ${COUNTED_TABLES.map((t) => `(SELECT count(*)::int FROM ${t}) AS ${t}`).join(', ')}`,
);

async function rowCounts(world: FuzzWorld): Promise<Counts> {
  const [row] = await queryRows(world.svc.runtime.database.db, COUNT_SQL);
  return Object.fromEntries(COUNTED_TABLES.map((t) => [t, Number(row?.[t])])) as Counts;
}

/**
 * Refusals that store something by design, as the most rows each table may gain:
 * - the query proxy records each query it refuses or that fails as a usage event of the request (the usage events
 *   list refused queries too: README, "Five minutes with it");
 * - a failed sign-in that starts a lock writes its audit record, `signin.locked`, one per key it locks
 *   (shared/identity/lockouts.ts).
 */
function allowedWrites(c: FuzzCase, status: number, error: string | undefined): Partial<Counts> {
  if (c.op.operationId === 'queryRequest' && status === 400 && /^(sql_|query_|result_)/.test(error ?? ''))
    return { request_usage_events: 1 };
  if (
    (c.op.operationId === 'login' && error === 'invalid_credentials') ||
    (c.op.operationId === 'cliToken' && error === 'invalid_grant')
  )
    return { audit_logs: 2 };
  return {};
}

export interface Outcome {
  status: number;
  error?: string;
  /** What is wrong with the answer; empty when nothing is. */
  problems: string[];
  wire: WireRequest;
  text: string;
}

/** The counts after the previous case: nothing else writes between two cases of one world. */
const lastCounts = new WeakMap<FuzzWorld, Counts>();

/** Sends a case and judges its answer: no 5xx, a 4xx is {error, message}, documented, and stores nothing. */
export async function runCase(world: FuzzWorld, c: FuzzCase): Promise<Outcome> {
  const before = lastCounts.get(world) ?? (await rowCounts(world));
  const wire = wireRequest(c, world);
  const answer = await sendWire(world.svc.url, wire);
  const after = await rowCounts(world);
  lastCounts.set(world, after);
  const problems: string[] = [];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const error = (body as { error?: unknown } | undefined)?.error;
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  try {
    world.svc.contract.take(answer.requestId);
  } catch (err) {
    problems.push((err as Error).message.split('\n').slice(0, 3).join(' '));
  }
  if (!answer.requestId) problems.push('the answer did not come from a function (no apigw-requestid)');
  if (
    c.expect &&
    (answer.status !== c.expect.status ||
      error !== c.expect.error ||
      (c.expect.message && !c.expect.message.test(String((body as { message?: unknown })?.message))))
  ) {
    problems.push(
      `expected ${c.expect.status} ${c.expect.error}${c.expect.message ? ` ${c.expect.message}` : ''}`,
    );
  }
  if (answer.status >= 400 && answer.status < 500) {
    const keys = body && typeof body === 'object' ? Object.keys(body).sort().join(',') : '';
    const b = body as { error?: unknown; message?: unknown } | undefined;
    if (keys !== 'error,message' || typeof b?.error !== 'string' || typeof b?.message !== 'string')
      problems.push(`a ${answer.status} whose body is not exactly {error, message}`);
    const allowed = allowedWrites(c, answer.status, typeof error === 'string' ? error : undefined);
    const changed = COUNTED_TABLES.filter((t) => {
      const gained = after[t] - before[t];
      return gained !== 0 && !(gained > 0 && gained <= (allowed[t] ?? 0));
    });
    if (changed.length)
      problems.push(
        `refused, yet stored: ${changed.map((t) => `${t} ${before[t]} → ${after[t]}`).join(', ')}`,
      );
  }
  return {
    status: answer.status,
    ...(typeof error === 'string' ? { error } : {}),
    problems,
    wire,
    text: answer.text,
  };
}

/** A failure, readable: the request as sent and the answer. */
export function describeOutcome(c: FuzzCase, o: Outcome): string {
  const body = o.wire.body ? o.wire.body.toString('utf8') : '';
  return [
    `${c.op.operationId}: ${o.problems.join('; ')}`,
    `  case: ${render(c)}`,
    `  sent: ${o.wire.method} ${short(o.wire.path, 300)} ${JSON.stringify(
      Object.fromEntries(
        Object.entries(o.wire.headers).filter(([k]) => k !== 'authorization' && k !== 'x-device-signature'),
      ),
    )} ${short(JSON.stringify(body), 400)}`,
    `  answer: ${o.status} ${short(o.text, 400)}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The world
// ---------------------------------------------------------------------------------------------------------------

/** The overrides of startTestService a world needs (the CLI sign-in routes are mounted with a dashboard URL). */
export const FUZZ_SERVICE_OVERRIDES = { dashboard_url: 'http://dashboard.test' };

const USER = { email: 'fuzz-user@example.test', password: 'a long fuzzing password' };
const LOOPBACK = 'http://127.0.0.1:53682/callback';

/**
 * Fills a fresh service with what the cases refer to: the demo datasource and its catalog, a user, an enrolled
 * device with inventory and events in a session, a pending and an active data-access request, a pending CLI sign-in
 * (read, approved and refused by the cases of those operations: the first decision stands, the others are 409).
 */
export async function prepareWorld(svc: TestService): Promise<FuzzWorld> {
  const ok = <T>(res: { status: number; body: Record<string, unknown>; text: string }, what: string): T => {
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
    return res.body.data as T;
  };
  await seedDemoDatasource(svc.runtime.database.db);
  const admin = await svc.adminToken();
  ok(await svc.call('POST', '/v1/admin/users', { token: admin, body: { ...USER, name: 'Fuzz' } }), 'user');
  const user = ok<{ access_token: string }>(
    await svc.call('POST', '/v1/auth/login', { body: USER }),
    'login',
  ).access_token;
  const identity = await enrolledDevice(svc.url, user);
  const serial = hardware().serialNumber;
  const world: FuzzWorld = { svc, admin, user, identity, ids: {}, opIds: {}, known: {}, examples: {} };
  const device = async (path: string, fields: Record<string, unknown>) => {
    const c = caseOf({
      op: operationAt('POST', path),
      mutation: 'setup',
      path: {},
      query: '',
      headers: {},
      body: { value: fields },
    });
    const answer = await sendWire(svc.url, wireRequest(c, world));
    svc.contract.take(answer.requestId);
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${answer.text}`);
  };
  const inventory = {
    agents: [
      {
        agentType: 'claude-code',
        displayName: 'Claude Code',
        mcps: [{ name: 'github', enabled: true, transport: 'http' }],
      },
    ],
  };
  await device('/v1/devices/inventory', inventory);
  await device('/v1/devices/events', {
    events: [
      invocationEvent({ session_id: 'fuzz-session' }),
      invocationEvent({
        session_id: 'fuzz-session',
        result: 'denied',
        deny_code: 'policy',
        deny_reason: 'not allowed',
        rule_applied: 'fuzz.rule',
      }),
    ],
  });
  const create = async (title: string) =>
    ok<{ id: string }>(
      await svc.call('POST', '/v1/requests', { token: user, body: demoOrdersRequest(title) }),
      'request',
    ).id;
  const approve = async (id: string) =>
    ok(await svc.call('POST', `/v1/admin/requests/${id}/approve`, { token: admin, body: {} }), 'approve');
  const [pending, active, toDecide, toRevoke] = [
    await create('fuzz pending'),
    await create('fuzz active'),
    await create('fuzz to decide'),
    await create('fuzz to revoke'),
  ];
  await approve(active);
  await approve(toRevoke);
  const deviceId = ok<{ devices: Array<{ id: string; serial_number: string }> }>(
    await svc.call('GET', '/v1/admin/devices', { token: admin }),
    'devices',
  ).devices[0]!;
  const eventId = ok<{ events: Array<{ id: string }> }>(
    await svc.call('GET', '/v1/admin/observability/events', { token: admin }),
    'events',
  ).events[0]!.id;
  const catalog = ok<{ entries: Array<{ id: string }> }>(
    await svc.call('GET', '/v1/catalog', { token: user }),
    'catalog',
  ).entries.map((e) => e.id);
  const authorize = await sendWire(svc.url, {
    method: 'GET',
    path: `/v1/auth/cli/authorize?${new URLSearchParams({ client_id: 'fuzz-agent', redirect_uri: LOOPBACK, state: 'fuzz', code_challenge: 'A'.repeat(43), code_challenge_method: 'S256' })}`,
    headers: {},
  });
  svc.contract.take(authorize.requestId);
  const signin = new URL(authorize.location ?? 'http://x/').searchParams.get('request');
  if (!signin) throw new Error(`authorize: ${authorize.status} ${authorize.text}`);

  world.ids = {
    requests: [pending, active],
    devices: [deviceId.id],
    events: [eventId],
    sessions: ['fuzz-session'],
    catalog,
  };
  world.opIds = {
    approveRequest: [toDecide],
    denyRequest: [toDecide],
    revokeRequest: [toRevoke],
    retryProvisioning: [toDecide, toRevoke],
    getCliRequest: [signin],
  };
  const now = Date.now();
  world.known = {
    from: [new Date(now - DAY).toISOString()],
    to: [new Date(now).toISOString()],
    device_id: [deviceId.id],
    serial: [deviceId.serial_number, serial],
    session_id: ['fuzz-session'],
    agent_type: ['claude-code'],
    agentType: ['claude-code'],
    mcp: ['github'],
    mcp_name: ['github'],
    tool: ['search_code'],
    datasource_name: ['demo'],
    redirect_uri: [LOOPBACK],
    client_id: ['acp-agent-cli'],
    request: [signin],
    sql: ['SELECT count(*) FROM eu', 'SELECT id FROM eu ORDER BY id LIMIT 3'],
    email: [USER.email],
    password: [USER.password],
  };
  world.examples = {
    createRequest: [demoOrdersRequest('fuzz')],
    queryRequest: [{ sql: 'SELECT count(*) FROM eu' }],
    denyRequest: [{ reason: 'fuzz' }],
    reportInventory: [inventory],
    reportInventoryAlias: [inventory],
    ingestEvents: [{ events: [invocationEvent({ session_id: 'fuzz-session' })] }],
    registerDevice: [hardware('SN-FUZZ')],
    login: [USER],
    createCatalogEntry: [{ datasource_id: 'fuzz', datasource_name: 'fuzz', target_name: 'things' }],
    ingestAuditLogs: [{ records: [{ action_type: 'fuzz.test', timestamp: new Date().toISOString() }] }],
  };
  lastCounts.set(world, await rowCounts(world));
  return world;
}

const operationAt = (method: string, template: string): Operation => {
  const op = operations.find((o) => o.method === method && o.template === template);
  if (!op) throw new Error(`no operation ${method} ${template}`);
  return op;
};

/** A case written by hand (a regression): the operation by its operationId, the parts given (path ids encoded). */
export function caseFor(
  operationId: string,
  parts: Partial<Pick<FuzzCase, 'path' | 'query' | 'headers' | 'body' | 'contentType' | 'mutation'>>,
): FuzzCase {
  const op = operations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId}`);
  return caseOf({ op, mutation: 'by hand', path: {}, query: '', headers: {}, ...parts });
}
