// The routes about the API itself (its OpenAPI document and reference page); merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { openApiDocument } from '../core/schemas/common.ts';

export const openapi = defineRoute({
  method: 'GET',
  path: '/v1/openapi.json',
  handler: 'meta/openapi',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary: 'This OpenAPI 3.1 document',
  response: openApiDocument,
});

export const apiReference = defineRoute({
  method: 'GET',
  path: '/v1/docs',
  handler: 'meta/api-reference',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary:
    'The API reference: this document rendered for people (Redoc), with a strict Content-Security-Policy',
  responseType: 'text/html',
});

export const apiReferenceScript = defineRoute({
  method: 'GET',
  path: '/v1/docs/redoc.standalone.js',
  handler: 'meta/api-reference',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary: 'The script of the API reference page (Redoc)',
  responseType: 'text/javascript',
});

export const metaRoutes = {
  openapi,
  apiReference,
  apiReferenceScript,
} satisfies Record<string, RouteSpec>;
