import * as z from 'zod';
import { isoTimestamp, pageEnvelope, pagination } from './common.ts';

export const catalogEntryView = z
  .object({
    id: z.string(),
    datasource_id: z.string(),
    datasource_name: z.string(),
    target_name: z.string(),
    target_location: z.string(),
    summary: z.string(),
    scan_policy: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    schema: z.unknown(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'CatalogEntry' });
export type CatalogEntryView = z.output<typeof catalogEntryView>;

const metadata = z.record(z.string(), z.unknown());

export const createCatalogBody = z
  .object({
    datasource_id: z.string().trim().min(1).max(200),
    datasource_name: z.string().trim().min(1).max(200),
    target_name: z.string().max(200).default(''),
    target_location: z.string().max(2000).default(''),
    summary: z.string().max(5000).default(''),
    scan_policy: z.string().max(200).default(''),
    metadata: metadata.default({}),
    schema: z.unknown().optional(),
  })
  .strict();
export type CreateCatalogBody = z.output<typeof createCatalogBody>;

/**
 * The spec's PATCH body: every field optional. An empty body is a valid patch that changes nothing: the entry comes
 * back as it is, with no write and no audit record. An unknown field is a 400.
 */
export const updateCatalogBody = z
  .object({
    metadata: metadata.optional(),
    scan_policy: z.string().max(200).optional(),
    schema: z.unknown().optional(),
    summary: z.string().max(5000).optional(),
    target_location: z.string().max(2000).optional(),
    target_name: z.string().max(200).optional(),
  })
  .strict();
export type UpdateCatalogBody = z.output<typeof updateCatalogBody>;

export const listCatalogQuery = z
  .object({
    datasource_name: z.string().min(1).max(200).optional(),
    sort: z.enum(['created_at', '-created_at', 'datasource_name']).default('datasource_name'),
    ...pagination,
  })
  .strict();
export type ListCatalogQuery = z.output<typeof listCatalogQuery>;

export const catalogListResponse = pageEnvelope('entries', catalogEntryView);
