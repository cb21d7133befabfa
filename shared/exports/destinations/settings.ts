// Each destination kind's settings (what is not secret, kept in export_destinations.settings), validated once when a
// destination is written and again when the delivery builds its sender.
import * as z from 'zod';

const receiverUrl = (what: string) =>
  z
    .url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' })
    .max(2048)
    .meta({ description: what });
const shape = z.enum(['ocsf', 'event']).default('ocsf').meta({
  description:
    '`ocsf`: OCSF API Activity (docs/exports.md); `event`: the stored event as the API returns it, without the prompt',
});

export const otlpHttpSettings = z
  .object({
    endpoint: receiverUrl("The collector's OTLP/HTTP base URL: /v1/traces and /v1/metrics are appended"),
    encoding: z.enum(['protobuf', 'json']).default('protobuf'),
    metrics: z.boolean().default(true).meta({ description: 'Also send mcp.client.operation.duration' }),
  })
  .strict();

export const splunkHecSettings = z
  .object({
    url: receiverUrl(
      "HEC's base URL (e.g. https://splunk.example.com:8088): /services/collector/event is appended",
    ),
    index: z.string().min(1).max(80).optional(),
    source: z.string().min(1).max(200).default('agent-control-plane'),
    sourcetype: z.string().min(1).max(200).default('ocsf:api_activity'),
    shape,
  })
  .strict();

export const webhookSettings = z
  .object({
    url: receiverUrl('Where each batch is posted, as JSON lines'),
    shape,
    auth: z.enum(['hmac', 'bearer']).default('hmac').meta({
      description:
        '`hmac`: signed as the alert webhooks are, with the secret as key; `bearer`: the secret as a bearer token',
    }),
  })
  .strict();

/** An S3 bucket's name as S3 allows it (the stack's [aws] security_lake_bucket takes the same). */
export const s3BucketName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z, 0-9, . and -)');

/** The classes a lake can take, each to its own custom source (ocsf-objects.ts, OCSF_CLASSES). */
const customSource = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,20}$/, 'must be a custom source name: up to 20 letters, digits, _ and -');

export const securityLakeSettings = z
  .object({
    bucket: s3BucketName.meta({ description: "The lake's bucket (aws-security-data-lake-<region>-<id>)" }),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS Region (e.g. eu-west-1)')
      .meta({ description: 'The Region the custom sources were created in: the region= partition' }),
    account_id: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .meta({ description: 'The account of the custom sources: the accountId= partition' }),
    sources: z
      .object({
        apiActivity: customSource.meta({
          description: 'The custom source of tool calls (API Activity, 6003)',
        }),
        deviceInventory: customSource.optional(),
        softwareInventory: customSource.optional(),
        userAccess: customSource.optional(),
        datastoreActivity: customSource.optional(),
        detectionFinding: customSource.optional(),
      })
      .strict()
      .meta({ description: 'The custom source of each OCSF class sent (one class per source)' }),
  })
  .strict();

export type OtlpHttpSettings = z.output<typeof otlpHttpSettings>;
export type SplunkHecSettings = z.output<typeof splunkHecSettings>;
export type WebhookSettings = z.output<typeof webhookSettings>;
export type SecurityLakeSettings = z.output<typeof securityLakeSettings>;
