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

export type OtlpHttpSettings = z.output<typeof otlpHttpSettings>;
export type SplunkHecSettings = z.output<typeof splunkHecSettings>;
export type WebhookSettings = z.output<typeof webhookSettings>;
