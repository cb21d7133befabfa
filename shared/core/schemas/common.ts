import * as z from 'zod';

export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

/** limit/offset of every offset-paginated list: default 20, maximum 100 (the spec's Limits); out of range is 400. */
export const pagination = {
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

export const errorBody = z
  .object({
    error: z.string().meta({ description: 'Stable snake_case code, e.g. validation_failed' }),
    message: z.string().meta({ description: 'A sentence for a person' }),
  })
  .meta({ id: 'Error' });

export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

/** The envelope of an offset-paginated list: {success, data: {<key>: [item…], total, limit, offset}}. */
export const pageEnvelope = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  envelope(
    z.object({
      [key]: z.array(item),
      total: z.number().int(),
      limit: z.number().int(),
      offset: z.number().int(),
    } as { [P in K]: z.ZodArray<T> } & {
      total: z.ZodNumber;
      limit: z.ZodNumber;
      offset: z.ZodNumber;
    }),
  );

export const uuidParam = z.object({ id: z.uuid({ message: 'must be a UUID' }) });
export const idParam = z.object({ id: z.string().min(1).max(200) });

export const isoTimestamp = z.string().meta({ format: 'date-time' });

/** GET /v1/openapi.json answers an OpenAPI 3.1 document, described here only by its top level. */
export const openApiDocument = z
  .object({ openapi: z.string(), info: z.object({ title: z.string(), version: z.string() }).loose() })
  .loose()
  .meta({
    id: 'OpenApiDocument',
    description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0)',
  });
