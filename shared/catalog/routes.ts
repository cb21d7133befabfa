// Rows of the route table for the catalog (read by anyone signed in, written by admins); merged into
// shared/routes.ts.
// Each row is exported on its own, marked pure, and the table lists them: a function's bundle takes its own rows
// and leaves the others out (infra/route-tables.ts). So a row holds nothing esbuild would keep for its side effects
// (body limits are numbers, not products; `envelope(...)` is marked pure too).
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

export const listCatalog = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/catalog',
  handler: 'catalog/list',
  auth: 'user',
  tags: ['catalog'],
  summary: 'Catalog entries (datasources and their targets), paginated',
  query: listCatalogQuery,
  response: catalogListResponse,
});

export const getCatalogEntry = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/catalog/{id}',
  handler: 'catalog/get',
  auth: 'user',
  tags: ['catalog'],
  summary: 'One catalog entry',
  params: requestIdParam,
  response: /* @__PURE__ */ envelope(catalogEntryView),
  errors: [404],
});

export const createCatalogEntry = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/admin/catalog',
  handler: 'catalog/create',
  auth: 'admin',
  kind: 'write',
  tags: ['catalog', 'admin'],
  summary: 'Create a catalog entry (audited)',
  body: createCatalogBody,
  response: /* @__PURE__ */ envelope(catalogEntryView),
  successStatuses: [201],
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'payload_too_large' },
});

export const updateCatalogEntry = /* @__PURE__ */ defineRoute({
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
