import * as z from 'zod';
import { isoTimestamp, pageEnvelope, pagination } from '../core/schemas/common.ts';
import { boundedJson, nullAsAbsent, readOnlyMember } from '../core/schemas/input-rules.ts';

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

const metadata = boundedJson(z.record(z.string(), z.unknown()), 262_144);
const schemaDocument = boundedJson(z.unknown(), 524_288);

export const createCatalogBody = nullAsAbsent(
  z
    .object({
      datasource_id: z.string().trim().min(1).max(200),
      datasource_name: z.string().trim().min(1).max(200),
      target_name: z.string().max(200).default(''),
      target_location: z.string().max(2000).default(''),
      summary: z.string().max(5000).default(''),
      scan_policy: z.string().max(200).default(''),
      metadata: metadata.default({}),
      schema: schemaDocument.optional(),
    })
    .strict(),
);
export type CreateCatalogBody = z.output<typeof createCatalogBody>;

/** The members of a catalog entry (catalogEntryView) that a PATCH cannot change. */
export const CATALOG_READ_ONLY = [
  'id',
  'datasource_id',
  'datasource_name',
  'created_at',
  'updated_at',
] as const;

/**
 * The spec's PATCH body: every field optional. An empty body is a valid patch that changes nothing: the entry comes
 * back as it is, with no write and no audit record. The read-only members of the entry are accepted and ignored, so
 * that a client may send back the entry it read, changed; any other unknown field is a 400 naming it. A null is
 * the field left out (it changes nothing).
 */
export const updateCatalogBody = nullAsAbsent(
  z
    .object({
      metadata: metadata.optional(),
      scan_policy: z.string().max(200).optional(),
      schema: schemaDocument.optional(),
      summary: z.string().max(5000).optional(),
      target_location: z.string().max(2000).optional(),
      target_name: z.string().max(200).optional(),
      // Documented (JSON Schema readOnly) and dropped before validation, whatever their value.
      id: readOnlyMember(),
      datasource_id: readOnlyMember(),
      datasource_name: readOnlyMember(),
      created_at: readOnlyMember(),
      updated_at: readOnlyMember(),
    })
    .strict(),
  { ignore: CATALOG_READ_ONLY },
);
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
