import * as z from 'zod';
import type { Config } from './config/schema.ts';
import type { RouteSpec } from './http/route.ts';
import { routeList } from './routes.ts';
import { errorBody } from './schemas/common.ts';

type JsonSchema = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const object = jsonSchema(schema, 'input') as {
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

function errorStatuses(route: RouteSpec): number[] {
  const set = new Set<number>([500, ...(route.errors ?? [])]);
  if (route.database !== false) set.add(503);
  if (route.body || route.query || route.params) set.add(400);
  if (route.auth !== 'public') set.add(401);
  if (route.auth === 'admin' || route.auth === 'user') set.add(403);
  if (route.params) set.add(404);
  return [...set].sort();
}

const SECURITY: Record<RouteSpec['auth'], JsonSchema[]> = {
  public: [],
  user: [{ bearer: [] }],
  admin: [{ bearer: [] }],
  device: [{ deviceSignature: [] }],
  'device+user': [{ bearer: [], deviceSignature: [] }],
};

/** The OpenAPI 3.1 document, generated from the route table (served at /v1/openapi.json, written by npm run openapi). */
export function buildOpenApi(config?: Pick<Config, 'version'> & Partial<Config>): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [id, route] of routeList) {
    const responses: Record<string, JsonSchema> = {
      [String(route.successStatus ?? 200)]: {
        description: 'Success',
        ...(route.response
          ? { content: { 'application/json': { schema: jsonSchema(route.response, 'output') } } }
          : {}),
      },
    };
    for (const status of errorStatuses(route)) {
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const operation: JsonSchema = {
      operationId: id,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [...route.tags],
      'x-auth': route.auth,
      'x-handler': `functions/${route.handler}.ts`,
      security: SECURITY[route.auth],
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      ...(route.body
        ? {
            requestBody: {
              required: !route.body.safeParse(undefined).success,
              content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
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
      version: config?.version ?? '0.1.0',
      description:
        'Device observability for AI agents and MCP servers, and data-access requests. Errors are {error, message}.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: jsonSchema(errorBody, 'output') },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        deviceSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Device-Signature',
          description:
            'Base64 signature over the RFC 8785 canonical body, made with the device key (device-protocol.md)',
        },
      },
    },
  };
}
