// The OpenAPI 3.1 document, generated from the route table: served at GET /v1/openapi.json, written by
// `npm run openapi`, and the contract every response in the tests is checked against (test/support/contract.ts).
// Schemas that carry an id (`.meta({ id })`) become components/schemas and are referenced from there, so that the
// document loads in standard tools (validators, client generators, gateways); an unnamed shared schema is an error.
import * as z from 'zod';
import { type Config, DEFAULT_VERSION } from '../core/config/schema.ts';
import { errorStatuses, type RouteSpec, successStatuses } from '../core/http/route.ts';
import { errorBody } from '../core/schemas/common.ts';
import { isNullTolerant } from '../core/schemas/input-rules.ts';
import { routeList } from '../routes.ts';

type JsonSchema = Record<string, unknown>;

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  302: 'Found',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'health', description: 'Service status, system information and the dependencies the probe checks' },
  { name: 'meta', description: 'This document' },
  { name: 'auth', description: 'Local sign-in and the browser-brokered sign-in of the endpoint agent' },
  { name: 'users', description: 'Local accounts (auth.provider = local)' },
  {
    name: 'devices',
    description: 'Signed device registration, inventory and tool-call events (docs/device-protocol.md)',
  },
  {
    name: 'observability',
    description: 'The fleet, its agents and MCP servers, and the tool-call event browser',
  },
  { name: 'requests', description: 'Data-access requests: lifecycle, environments and the SQL query proxy' },
  { name: 'catalog', description: 'Catalog entries describing datasources' },
  { name: 'audit', description: 'The append-only, hash-chained audit log' },
];

/**
 * Collects the named schemas of every conversion into components/schemas. zod emits a named schema into the
 * conversion's own `$defs`; a `$ref` to `#/$defs/X` would resolve against the document root, where there is none.
 * An input and an output form of one schema that differ (defaults, transforms) are kept as `X` and `XInput`.
 */
class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  add(converted: JsonSchema, io: 'input' | 'output'): JsonSchema {
    const { $defs, ...schema } = converted as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const renamed = new Map<string, string>();
    for (const [name, def] of Object.entries($defs ?? {})) {
      if (name.startsWith('__schema')) {
        throw new Error(
          `an unnamed schema is shared or recursive (${JSON.stringify(def).slice(0, 120)}): give it .meta({ id })`,
        );
      }
      renamed.set(name, this.place(name, def, io, $defs ?? {}));
    }
    return rewriteRefs(schema, renamed) as JsonSchema;
  }

  private place(
    name: string,
    def: JsonSchema,
    io: 'input' | 'output',
    defs: Record<string, JsonSchema>,
  ): string {
    const candidates = io === 'input' ? [name, `${name}Input`] : [name, `${name}Output`];
    for (const candidate of candidates) {
      const renamed = new Map(Object.keys(defs).map((n) => [n, n === name ? candidate : n] as const));
      const body = rewriteRefs(def, renamed) as JsonSchema;
      const existing = this.schemas[candidate];
      if (!existing) {
        this.schemas[candidate] = body;
        return candidate;
      }
      if (JSON.stringify(existing) === JSON.stringify(body)) return candidate;
    }
    throw new Error(`two different schemas are both named ${name}`);
  }
}

function rewriteRefs(value: unknown, renamed: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, renamed));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
        const name = v.slice('#/$defs/'.length);
        return [key, `#/components/schemas/${renamed.get(name) ?? name}`];
      }
      return [key, rewriteRefs(v, renamed)];
    }),
  );
}

function convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: io === 'input' ? nullableOptionals : undefined,
  }) as JsonSchema;
  delete out.$schema;
  return io === 'input' ? (dropVacuousNull(out) as JsonSchema) : out;
}

/** Keys that do not constrain a value: a schema with no other key accepts anything, null included. */
const ANNOTATIONS = new Set([
  'description',
  'default',
  'examples',
  'title',
  'readOnly',
  'writeOnly',
  'deprecated',
]);

/** `anyOf: [{}, {type: null}]` says nothing more than `{}` (and linters call it illogical): keep the `{}`. */
function dropVacuousNull(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropVacuousNull);
  if (!value || typeof value !== 'object') return value;
  const object = value as JsonSchema;
  const anyOf = object.anyOf as JsonSchema[] | undefined;
  if (anyOf?.length === 2 && JSON.stringify(anyOf[1]) === '{"type":"null"}') {
    const first = anyOf[0] as JsonSchema;
    if (Object.keys(first).every((key) => ANNOTATIONS.has(key))) {
      const { anyOf: _, ...rest } = object;
      return { ...first, ...rest };
    }
  }
  return Object.fromEntries(Object.entries(object).map(([key, v]) => [key, dropVacuousNull(v)]));
}

/**
 * In a request object built with nullAsAbsent (shared/core/schemas/input-rules.ts), `null` in a member that may be left
 * out means that it is left out: the document says so, by allowing null there.
 */
function nullableOptionals(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  if (!isNullTolerant(ctx.zodSchema as z.ZodType)) return;
  const properties = ctx.jsonSchema.properties as Record<string, JsonSchema> | undefined;
  const required = new Set((ctx.jsonSchema.required as string[] | undefined) ?? []);
  for (const [key, property] of Object.entries(properties ?? {})) {
    if (required.has(key) || property.readOnly) continue;
    // The member's own schema object, not a copy: zod fills it in after this hook.
    properties![key] = { anyOf: [property, { type: 'null' }] };
  }
}

const SECURITY: Record<RouteSpec['auth'], JsonSchema[]> = {
  public: [],
  user: [{ bearer: [] }],
  admin: [{ bearer: [] }],
  device: [{ deviceSignature: [] }],
  // Register's signature travels in the body (its `signature` member), which no security scheme can name.
  'device+user': [{ bearer: [] }],
};

const RETRY_AFTER = {
  description: 'Seconds after which a retry may succeed',
  schema: { type: 'integer', minimum: 0 },
};

/** The OpenAPI 3.1 document, generated from the route table (served at /v1/openapi.json, written by npm run openapi). */
export function buildOpenApi(config?: Pick<Config, 'version'> & Partial<Config>): JsonSchema {
  const components = new Components();
  const errorRef = { $ref: `#/components/schemas/${errorBody.meta()?.id}` };
  components.add(convert(z.object({ e: errorBody }), 'output'), 'output');
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [id, route] of routeList) {
    const responses: Record<string, JsonSchema> = {};
    const responseSchema = route.response
      ? components.add(convert(route.response, 'output'), 'output')
      : undefined;
    for (const status of successStatuses(route)) {
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Success',
        ...(status === 302
          ? {
              headers: { Location: { description: 'Where to send the browser', schema: { type: 'string' } } },
            }
          : {}),
        // 304 answers a conditional request with no body, only the tag of what the caller holds.
        ...(status === 304
          ? {
              headers: {
                ETag: { description: 'The tag the caller sent: still current', schema: { type: 'string' } },
              },
            }
          : {}),
        ...(responseSchema && status !== 304
          ? { content: { 'application/json': { schema: responseSchema } } }
          : {}),
        ...(route.responseType ? { content: { [route.responseType]: { schema: { type: 'string' } } } } : {}),
      };
    }
    for (const status of errorStatuses(route)) {
      const body = route.errorBodies?.[status];
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Error',
        ...(status === 503 || status === 429 ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
        content: {
          'application/json': { schema: body ? components.add(convert(body, 'output'), 'output') : errorRef },
        },
      };
    }
    const parameters = [
      ...parametersOf(route.params, 'path', components),
      ...parametersOf(route.query, 'query', components),
      ...(route.headers ?? []).map((h) => ({
        name: h.name,
        in: 'header',
        required: h.required ?? false,
        description: h.description,
        schema: h.schema,
      })),
    ];
    const operation: JsonSchema = {
      operationId: id,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [...route.tags],
      'x-auth': route.auth,
      'x-handler': `functions/${route.handler}.ts`,
      security: SECURITY[route.auth],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              // The pipeline validates an absent body as {}: a body that {} satisfies may be left out.
              required: !route.body.safeParse({}).success,
              content: {
                'application/json': { schema: components.add(convert(route.body, 'input'), 'input') },
              },
            },
          }
        : {}),
      responses,
    };
    const methods = paths[route.path] ?? {};
    methods[route.method.toLowerCase()] = operation;
    paths[route.path] = methods;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent control plane',
      version: config?.version ?? DEFAULT_VERSION,
      description:
        'Device observability for AI agents and MCP servers, and data-access requests. Errors are {error, message}; ' +
        'the conventions (envelopes, pagination, idempotency, times) are in docs/api.md, the device wire contract in ' +
        'docs/device-protocol.md.',
    },
    servers: [{ url: '/' }],
    tags: TAGS,
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A session token from POST /v1/auth/login, or from the configured identity provider',
        },
        deviceSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Device-Signature',
          description:
            'Base64 signature over the RFC 8785 canonical body, made with the device key; the body carries the ' +
            'device certificate and clientTimestamp (docs/device-protocol.md)',
        },
      },
    },
  };
}

function parametersOf(
  schema: z.ZodType | undefined,
  where: 'path' | 'query',
  components: Components,
): JsonSchema[] {
  if (!schema) return [];
  const object = components.add(convert(schema, 'input'), 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }));
}
