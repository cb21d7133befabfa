import * as z from 'zod';
import { isoTimestamp } from '../core/schemas/common.ts';
import { boundedJson, boundedTime, nullAsAbsent } from '../core/schemas/input-rules.ts';

// RFC 3339 with a zone (Z or ±hh:mm), optional fraction. The freshness window itself is checked by shared/device.
export const rfc3339 = boundedTime(
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/, {
      message: 'must be an RFC 3339 timestamp with a zone, e.g. 2026-01-02T03:04:05Z',
      abort: true,
    })
    .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'is not a real date', abort: true }),
);

export const pem = z
  .string()
  .max(16_384)
  .regex(/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----/, {
    message: 'must be a PEM certificate',
  });

const short = (max = 256) => z.string().trim().min(1).max(max);

export const registerBody = nullAsAbsent(
  z.object({
    serialNumber: short(128),
    brand: short(128),
    model: short(256),
    certificate: pem,
    ownerEmail: z.string().max(320).default(''),
    clientTimestamp: rfc3339,
    signature: z.string().min(1).max(1024),
  }),
);

export const registerResponse = z
  .object({ deviceId: z.uuid(), certificateFingerprint: z.string(), ownerAssigned: z.literal(true) })
  .meta({ id: 'DeviceRegistration' });

export const deviceReleaseView = z
  .object({
    id: z.uuid(),
    serial_number: z.string(),
    brand: z.string(),
    owner_email: z
      .string()
      .meta({ description: 'The owner it was released from (they stay the owner until then)' }),
    released_at: isoTimestamp.meta({
      description:
        'Since when the next registration of the device, by any signed-in user, makes that user its owner',
    }),
  })
  .meta({ id: 'DeviceRelease' });

export const MCP_SOURCE_TYPES = ['npm', 'pypi', 'oci', 'executable', 'remote'] as const;

/** Where an MCP server comes from, derived on the laptop from its command line or URL (docs/device-protocol.md). */
export const mcpSource = nullAsAbsent(
  z.object({
    type: z.enum(MCP_SOURCE_TYPES),
    name: short(300).meta({
      description:
        "npm / PyPI package, OCI image (without tag), the command's base name, or for remote the URL origin scheme://host[:port]",
    }),
    version: short(128).optional().meta({
      description: 'The pinned package version, or the image tag or digest, when the config gives one',
    }),
  }),
).meta({ id: 'McpSource' });

/** A tool the agent's MCP proxy saw in the server's tools/list: its name and the hash of its definition. */
const mcpTool = nullAsAbsent(
  z.object({
    name: short(200),
    hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, { message: 'must be 64 lowercase hex characters (SHA-256)' })
      .meta({
        description:
          "SHA-256 of the RFC 8785 canonical JSON of the tool's {name, description, inputSchema} (docs/policy.md)",
      }),
  }),
).meta({ id: 'McpToolHash' });

// command, args, env, headers and URLs are not part of the schema: zod drops them, so they are never stored, logged
// or returned. An agent sends none of them (the source identity and the fingerprint are derived on the laptop).
const mcp = nullAsAbsent(
  z.object({
    name: short(200),
    enabled: z.boolean(),
    transport: z.enum(['stdio', 'http', 'sse']),
    scope: short(64).optional().meta({
      description: "Where the client keeps it, in the client's words: user, project, local, managed, …",
    }),
    source: mcpSource.optional(),
    fingerprint: z
      .string()
      .regex(/^[0-9a-f]{64}$/, { message: 'must be 64 lowercase hex characters (HMAC-SHA256)' })
      .optional()
      .meta({ description: "HMAC-SHA256 of the whole config entry under the device's own key" }),
    tools: z
      .array(mcpTool)
      .max(1000)
      .refine((tools) => new Set(tools.map((t) => t.name)).size === tools.length, {
        message: 'lists the same tool name twice',
      })
      .optional()
      .meta({
        description:
          "The server's tools and their definition hashes, from its last tools/list through the agent's MCP proxy (servers not proxied: absent)",
      }),
  }),
);

const agent = nullAsAbsent(
  z.object({
    agentType: short(100),
    displayName: z.string().max(200).default(''),
    version: short(100)
      .optional()
      .meta({ description: "The client's own version, when its config reveals it" }),
    capture: z
      .enum(['hooks', 'none'])
      .optional()
      .meta({ description: "Whether the agent captures this client's tool calls (through its hooks)" }),
    mcps: z.array(mcp).max(500).default([]),
  }),
).refine(
  (a) =>
    new Set(a.mcps.map((m) => JSON.stringify([m.name, m.scope ?? '', m.fingerprint ?? '']))).size ===
    a.mcps.length,
  { message: 'lists the same MCP name twice in one scope with one fingerprint', path: ['mcps'] },
);

export const inventoryBody = nullAsAbsent(
  z.object({
    certificate: pem,
    clientTimestamp: rfc3339,
    agentVersion: short(64).optional().meta({ description: "The endpoint agent's own version" }),
    agents: z
      .array(agent)
      .max(200)
      .refine((agents) => new Set(agents.map((a) => a.agentType)).size === agents.length, {
        message: 'lists the same agentType twice',
      }),
  }),
);
export type InventoryBody = z.output<typeof inventoryBody>;

export const inventoryResponse = z
  .object({
    success: z.literal(true),
    deviceId: z.uuid(),
    agentsIn: z.number().int(),
    mcpsIn: z.number().int(),
    receivedAt: isoTimestamp,
  })
  .meta({ id: 'InventoryAccepted' });

const optionalText = (max: number) => z.string().max(max).optional();

/**
 * Free-text diagnostics are stored up to these lengths (code points) and truncated beyond, not refused: one long
 * stack trace must not cost the batch it travels in (shared/devices/events.ts).
 */
export const EVENT_TEXT_MAX = { deny_reason: 2000, error_message: 4000 } as const;
const diagnostic = (field: keyof typeof EVENT_TEXT_MAX) =>
  z.string().optional().describe(`stored up to ${EVENT_TEXT_MAX[field]} characters; longer is truncated`);

export const observabilityEvent = nullAsAbsent(
  z.object({
    event_id: z.uuid({ message: 'must be a UUID' }).optional(),
    event_time: rfc3339,
    agent_type: short(100),
    mcp_name: short(200),
    tool: short(200),
    event_type: z.enum(['invocation', 'result', 'error']),
    result: z.enum(['allowed', 'denied', 'error']),
    deny_code: optionalText(200),
    deny_reason: diagnostic('deny_reason'),
    error_message: diagnostic('error_message'),
    rule_applied: optionalText(500),
    model: optionalText(200),
    session_id: optionalText(200),
    group: optionalText(200),
    actor_email: optionalText(320),
    tokens_in: z.number().int().min(0).max(100_000_000).default(0),
    tokens_out: z.number().int().min(0).max(100_000_000).default(0),
    duration_ms: z.number().int().min(0).max(86_400_000).default(0),
    skills: z.array(z.string().max(200)).max(100).default([]),
    prompt: z.string().optional(),
    metadata: boundedJson(z.record(z.string(), z.unknown()), 1_048_576).default({}),
  }),
).superRefine((e, ctx) => {
  if (e.result === 'denied') {
    for (const key of ['deny_code', 'deny_reason', 'rule_applied'] as const) {
      if (!e[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when result = denied' });
    }
  }
  if (e.result === 'error' && !e.error_message) {
    ctx.addIssue({ code: 'custom', path: ['error_message'], message: 'is required when result = error' });
  }
});
export type ObservabilityEventInput = z.output<typeof observabilityEvent>;

const counter = (description: string) =>
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).meta({ description });

/** The agent's cumulative counts of events it could not deliver (docs/device-protocol.md, "Spool counters"). */
export const spoolCounters = nullAsAbsent(
  z.object({
    dropped: counter('Events dropped unsent to stay under the spool size bound, since the spool was created'),
    torn: counter(
      'Spool records found torn by a crash mid-write (each one event lost), since the spool was created',
    ),
    refused: counter('Events this service refused (400 naming the event) and the agent dropped').default(0),
  }),
).meta({ id: 'SpoolCounters' });
export type SpoolCounters = z.output<typeof spoolCounters>;

export const eventsBody = nullAsAbsent(
  z.object({
    certificate: pem,
    clientTimestamp: rfc3339,
    // The 1..max_batch bound (413 above it) is checked against the config by the handler.
    events: z.array(observabilityEvent).min(1, { message: 'must hold at least one event' }),
    spool: spoolCounters.optional(),
  }),
);
export type EventsBody = z.output<typeof eventsBody>;

export const eventsResponse = z
  .object({
    success: z.literal(true),
    deviceId: z.uuid(),
    accepted: z.number().int(),
    duplicates: z.number().int(),
    receivedAt: isoTimestamp,
  })
  .meta({ id: 'EventsAccepted' });
