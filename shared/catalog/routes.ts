// Rows of the route table for the catalog (read by anyone signed in, written by admins); merged into
// shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { envelope } from '../core/schemas/common.ts';
import { requestIdParam } from '../requests/schemas.ts';
import {
  catalogEntryView,
  catalogListResponse,
  createCatalogBody,
  listCatalogQuery,
  updateCatalogBody,
} from './schemas.ts';

export const listCatalog = defineRoute({
  method: 'GET',
  path: '/v1/catalog',
  handler: 'catalog/list',
  auth: 'user',
  tags: ['catalog'],
  summary: 'Catalog entries (datasources and their targets), paginated',
  query: listCatalogQuery,
  response: catalogListResponse,
});

export const getCatalogEntry = defineRoute({
  method: 'GET',
  path: '/v1/catalog/{id}',
  handler: 'catalog/get',
  auth: 'user',
  tags: ['catalog'],
  summary: 'One catalog entry',
  params: requestIdParam,
  response: envelope(catalogEntryView),
  errors: [404],
});

export const createCatalogEntry = defineRoute({
  method: 'POST',
  path: '/v1/admin/catalog',
  handler: 'catalog/create',
  auth: 'admin',
  kind: 'write',
  tags: ['catalog', 'admin'],
  summary: 'Create a catalog entry (audited)',
  body: createCatalogBody,
  response: envelope(catalogEntryView),
  successStatuses: [201],
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'payload_too_large' },
});

export const updateCatalogEntry = defineRoute({
  method: 'PATCH',
  path: '/v1/admin/catalog/{id}',
  handler: 'catalog/update',
  auth: 'admin',
  kind: 'write',
  tags: ['catalog', 'admin'],
  summary: 'Update metadata, schema or target mapping of a catalog entry; returns the entry unwrapped',
  params: requestIdParam,
  body: updateCatalogBody,
  response: catalogEntryView,
  specErrors: [400, 401, 403, 404, 500],
  statusOf: { too_large: 400 },
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'payload_too_large' },
});

export const catalogRoutes = {
  listCatalog,
  getCatalogEntry,
  createCatalogEntry,
  updateCatalogEntry,
} satisfies Record<string, RouteSpec>;
