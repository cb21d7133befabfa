// Query, path and response schemas of the admin observability endpoints: devices, agents, MCPs, fleet,
// the event browser, sessions and the summary. Every list is bounded (limit 1..100, default 20) and paginated by an
// opaque keyset cursor; every filter is validated here, so a bad value is 400 naming it.
import * as z from 'zod';
import { DEFAULT_LIMIT, envelope, isoTimestamp, MAX_LIMIT } from '../core/schemas/common.ts';
import { boundedTime } from '../core/schemas/input-rules.ts';
import { MCP_SOURCE_TYPES } from '../devices/schemas.ts';

export const limit = z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT);
// A cursor holds the last row's sort key as JSON: a 400-character name of control characters is 2,400 characters
// escaped, 3,300 in base64url.
export const cursor = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be a cursor returned by this endpoint' })
  .optional();
const text = (max = 320) => z.string().trim().min(1).max(max).optional();
const timestamp = boundedTime(
  z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp', abort: true }),
).optional();
const uuid = z.uuid({ message: 'must be a UUID' }).optional();

/** Longest time range of the event browser and the summary. */
export const MAX_RANGE_DAYS = 90;

type Range = { from?: string | undefined; to?: string | undefined };
const rangeCheck = (value: Range, ctx: z.RefinementCtx) => {
  if (value.from && value.to && Date.parse(value.from) >= Date.parse(value.to)) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'must be before to' });
  }
  if (value.from && value.to && Date.parse(value.to) - Date.parse(value.from) > MAX_RANGE_DAYS * 86_400_000) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: `range must be at most ${MAX_RANGE_DAYS} days` });
  }
};

// ---- devices ----

export const DEVICE_SORTS = ['-last_seen', 'last_seen', '-created', 'created', 'serial', '-serial'] as const;
export const listDevicesQuery = z.object({
  owner: text(),
  q: text(200).meta({
    description: 'Part of the serial number, the model or the owner email (case-insensitive)',
  }),
  agent_type: text().meta({ description: 'Only devices where this agent type is currently reported' }),
  mcp: text().meta({ description: 'Only devices where an MCP server of this name is currently configured' }),
  status: z.enum(['online', 'offline', 'never_reported']).optional(),
  updated_since: timestamp,
  last_seen_before: timestamp,
  sort: z.enum(DEVICE_SORTS).default('-last_seen'),
  limit,
  cursor,
});
export type ListDevicesQuery = z.output<typeof listDevicesQuery>;

export const deviceIdParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

// ---- agents / MCPs ----

const windowed = {
  updated_since: timestamp,
  from: timestamp,
  to: timestamp,
  limit,
  cursor,
};
export const listAgentsQuery = z.object(windowed).superRefine(rangeCheck);
export type ListAgentsQuery = z.output<typeof listAgentsQuery>;
export const listMcpsQuery = z
  .object({
    ...windowed,
    agent_type: text(),
    transport: z.enum(['stdio', 'http', 'sse']).optional(),
  })
  .superRefine(rangeCheck);
export type ListMcpsQuery = z.output<typeof listMcpsQuery>;

// ---- fleet ----

export const CHANGE_KINDS = [
  'agent_appeared',
  'agent_disappeared',
  'mcp_appeared',
  'mcp_disappeared',
] as const;
export const fleetChangesQuery = z.object({
  device_id: uuid,
  kind: z.enum(CHANGE_KINDS).optional(),
  agent_type: text(),
  mcp: text(),
  since: timestamp,
  limit,
  cursor,
});
export type FleetChangesQuery = z.output<typeof fleetChangesQuery>;

// ---- events ----

export const eventFilterShape = {
  from: timestamp,
  to: timestamp,
  device_id: uuid,
  serial: text(),
  agent_type: text(),
  mcp: text(),
  tool: text(),
  event_type: z.enum(['invocation', 'result', 'error']).optional(),
  result: z.enum(['allowed', 'denied', 'error']).optional(),
  deny_code: text(),
  rule: text(),
  model: text(),
  session_id: text(),
  group: text(),
  actor: text(),
  skill: text(200),
  q: text(200),
};
export type EventFilters = {
  [K in keyof typeof eventFilterShape]?: z.output<(typeof eventFilterShape)[K]>;
};

export const listEventsQuery = z.object({ ...eventFilterShape, limit, cursor }).superRefine(rangeCheck);
export type ListEventsQuery = z.output<typeof listEventsQuery>;

export const eventIdParams = z.object({
  id: z.string().regex(/^[1-9][0-9]{0,17}$/, { message: 'must be an event id (a positive integer)' }),
});
export const sessionParams = z.object({ session_id: z.string().min(1).max(320) });
export const sessionQuery = z.object({ limit, cursor });
export type SessionQuery = z.output<typeof sessionQuery>;

export const BUCKETS = ['minute', 'hour', 'day'] as const;
/** What a summary computes: every part, or its totals alone. */
export const SUMMARY_PARTS = ['all', 'totals'] as const;
export const summaryQuery = z
  .object({
    ...eventFilterShape,
    bucket: z.enum(BUCKETS).optional(),
    top: z.coerce.number().int().min(1).max(50).default(10),
    parts: z.enum(SUMMARY_PARTS).default('all').meta({
      description:
        'all: every part; totals: the totals alone (top lists and series empty), for a count that needs no more',
    }),
  })
  .superRefine(rangeCheck);
export type SummaryQuery = z.output<typeof summaryQuery>;

export const filtersQuery = z
  .object({
    from: timestamp,
    to: timestamp,
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50),
  })
  .superRefine(rangeCheck);
export type FiltersQuery = z.output<typeof filtersQuery>;

// ---- responses (documented shapes) ----
// What the domain functions return (shared/observability/fleet/, events/ and summary/), field by field: every
// object is closed, except an event's free-form `metadata`. Counts and sums are integers (bigint sums are read as
// JSON numbers); rates are fractions rounded to 4 decimals; every time is an RFC 3339 UTC date-time.

/** A count or a sum of counts (events, tokens, devices): a non-negative integer. */
const count = (description?: string) => {
  const schema = z.number().int().min(0);
  return description ? schema.meta({ description }) : schema;
};
const ms = (description: string) => z.number().int().min(0).meta({ description });
const rate = (description: string) => z.number().min(0).max(1).meta({ description });
const nullableTs = isoTimestamp.nullable();
const ts = (description: string) => isoTimestamp.meta({ description });
const nullTs = (description: string) => nullableTs.meta({ description });
export const eventType = z.enum(['invocation', 'result', 'error']);
export const eventResult = z.enum(['allowed', 'denied', 'error']);
const transport = z.enum(['stdio', 'http', 'sse']);
const mcpSource = z
  .object({
    type: z.enum(MCP_SOURCE_TYPES),
    name: z.string().meta({
      description:
        'npm / PyPI package, OCI image, executable base name, or the remote origin scheme://host[:port]',
    }),
    version: z
      .string()
      .optional()
      .meta({ description: 'Pinned package version, image tag or digest; absent if none' }),
  })
  .meta({ id: 'McpSourceIdentity', description: 'Where an MCP server comes from, as the device derived it' });
export const page = {
  next_cursor: z.string().nullable().meta({
    description: 'Pass as `cursor`, with the same filters, for the next page; null on the last page',
  }),
  limit: z.number().int().min(1).max(MAX_LIMIT).meta({ description: 'The page size asked for' }),
};
const onlineThreshold = z
  .number()
  .int()
  .min(0)
  .meta({ description: 'Seconds: a device seen within this long is online (device.online_threshold)' });
const asOf = ts('The server time the statuses were computed at');

/** Calls in a window, from the rollups: the measures every per-name row carries. */
const callMeasures = {
  calls: count('Tool-call events'),
  denied: count('Events with result denied'),
  errors: count('Events with result error'),
  tokens_in: count('Sum of the tokens_in of the events'),
  tokens_out: count('Sum of the tokens_out of the events'),
};

export const timeRange = z
  .object({
    from: ts('Start, inclusive'),
    to: ts('End, exclusive'),
  })
  .meta({ id: 'TimeRange', description: 'A time range [from, to)' });

// ---- devices ----

export const deviceListItem = z
  .object({
    id: z.uuid(),
    serial_number: z.string(),
    brand: z.string(),
    model: z.string(),
    owner_subject: z.string(),
    owner_email: z.string().meta({ description: 'Empty when the owner has no email' }),
    status: z.enum(['online', 'offline', 'never_reported']).meta({
      description:
        'online: seen within online_threshold_seconds; never_reported: has sent neither inventory nor events; otherwise offline',
    }),
    last_seen_at: nullTs(
      'The last signed request of the device (register, inventory or events); null if none was recorded',
    ),
    last_inventory_at: nullTs('The last inventory report; null if none'),
    last_event_at: nullTs('The latest event_time the device reported; null if it sent no events'),
    created_at: ts('Enrollment'),
    updated_at: isoTimestamp,
    agent_version: z.string().nullable().meta({
      description: 'Version of the endpoint agent that sent the last inventory; null if it did not say',
    }),
    agents: count('Agents currently installed'),
    mcps: count('MCP servers currently configured, over all its agents'),
  })
  .meta({ id: 'FleetDevice' });

export const deviceListResponse = envelope(
  z.object({
    devices: z.array(deviceListItem),
    ...page,
    online_threshold_seconds: onlineThreshold,
    as_of: asOf,
  }),
);

const deviceAgent = z.object({
  agent_type: z.string(),
  display_name: z.string().meta({ description: 'Empty when the inventory gave none' }),
  version: z.string().nullable().meta({ description: "The client's version, when its config reveals it" }),
  capture: z
    .enum(['hooks', 'none'])
    .nullable()
    .meta({ description: "Whether the agent captures this client's tool calls; null if not reported" }),
  first_seen_at: ts('First inventory that listed it'),
  last_seen_at: ts('Latest inventory that listed it'),
});
const deviceMcp = z.object({
  agent_type: z.string().meta({ description: 'The agent it is configured in' }),
  name: z.string(),
  enabled: z.boolean(),
  transport,
  scope: z
    .string()
    .nullable()
    .meta({ description: 'Where the client keeps it (user, project, …); null if not reported' }),
  source: mcpSource.nullable().meta({ description: 'Its source identity; null if the agent reported none' }),
  fingerprint: z.string().nullable().meta({
    description:
      "HMAC-SHA256 of its whole config entry under the device's key: changes when the entry changes; comparable only within one device",
  }),
  first_seen_at: ts('First inventory that listed it'),
  last_seen_at: ts('Latest inventory that listed it'),
});
const recentEvent = z.object({
  id: z
    .string()
    .meta({ description: 'The event id (a positive integer, as a string): GET …/observability/events/{id}' }),
  event_time: isoTimestamp,
  agent_type: z.string(),
  mcp_name: z.string(),
  tool: z.string(),
  event_type: eventType,
  result: eventResult,
  deny_code: z.string().nullable().meta({ description: 'Set when result is denied' }),
  duration_ms: ms('Milliseconds'),
});

export const deviceDetailResponse = envelope(
  z
    .object({
      device: deviceListItem,
      certificate: z.object({
        fingerprint: z.string().meta({ description: 'SHA-256 of the DER certificate, lowercase hex' }),
        key_type: z.enum(['p256', 'ed25519']),
        not_before: isoTimestamp,
        not_after: isoTimestamp,
        valid_now: z.boolean().meta({ description: 'not_before <= now < not_after' }),
      }),
      owner: z.object({ subject: z.string(), email: z.string() }),
      spool: z
        .object({
          dropped: count('Events the agent dropped unsent to stay under its spool size bound'),
          torn: count('Records of its spool found torn by a crash mid-write (each lost)'),
          refused: count(
            'Events this service refused and the agent dropped (for example older than retention)',
          ),
          reported_at: isoTimestamp.meta({ description: 'When the agent last reported these counters' }),
        })
        .nullable()
        .meta({
          description:
            "The agent's cumulative counts of events it could not deliver, as it last reported them with a batch; null when it never did",
        }),
      agents: z
        .array(deviceAgent)
        .meta({ description: 'Current agents by agent_type: at most 200 (and 128 KiB)' }),
      agents_total: count('Current agents, all of them'),
      agents_truncated: z.boolean().meta({ description: 'agents lists fewer than agents_total' }),
      mcps: z
        .array(deviceMcp)
        .meta({ description: 'Current MCP servers by agent_type, name: at most 500 (and 256 KiB)' }),
      mcps_total: count('Current MCP servers, all of them'),
      mcps_truncated: z.boolean().meta({ description: 'mcps lists fewer than mcps_total' }),
      recent_events: z.array(recentEvent).meta({ description: 'Its 20 latest events, newest first' }),
      online_threshold_seconds: onlineThreshold,
      as_of: asOf,
    })
    .meta({ id: 'FleetDeviceDetail' }),
);

// ---- agents / MCPs ----

export const agentListResponse = envelope(
  z.object({
    agents: z.array(
      z
        .object({
          agent_type: z.string(),
          devices: count('Devices it is installed on'),
          mcps: z
            .object({
              distinct: count('Distinct MCP server names configured in it, fleet-wide'),
              enabled: count('Configurations (device × MCP server × scope × config) enabled'),
              disabled: count('Configurations (device × MCP server × scope × config) disabled'),
            })
            .meta({ description: 'Its MCP server configurations across the fleet' }),
          transports: z.array(transport).meta({ description: 'Transports of its MCP servers, distinct' }),
          first_seen_at: ts('First inventory that listed it, on any device'),
          last_seen_at: ts('Latest inventory that listed it, on any device'),
          ...callMeasures,
        })
        .meta({ id: 'FleetAgent', description: 'An agent type across the fleet; calls in `window`' }),
    ),
    ...page,
    window: timeRange.meta({
      description: 'The call window: from..to, default the last 7 days (calls counted by whole hours)',
    }),
  }),
);

export const mcpListResponse = envelope(
  z.object({
    mcps: z.array(
      z
        .object({
          name: z.string(),
          devices: count('Devices where it is configured'),
          enabled_devices: count('Devices where it is configured and enabled (in at least one agent)'),
          disabled_devices: count('Devices where it is configured and disabled (in at least one agent)'),
          transports: z.array(transport).min(1).meta({ description: 'Its transports, distinct' }),
          agent_types: z
            .array(z.string())
            .min(1)
            .meta({ description: 'Agent types it is configured in, sorted: at most 20' }),
          agent_types_total: count('Agent types it is configured in, all of them'),
          sources: z.array(mcpSource).meta({
            description:
              'Distinct source identities reported for this name (npm / PyPI package, OCI image, executable, remote origin), sorted: at most 10',
          }),
          sources_truncated: z.boolean().meta({ description: 'More than 10 distinct sources are reported' }),
          first_seen_at: ts('First inventory that listed it, on any device'),
          last_seen_at: ts('Latest inventory that listed it, on any device'),
          ...callMeasures,
          usage: z
            .enum(['configured_and_called', 'configured_never_called'])
            .meta({ description: 'Whether it was called in `window`' }),
        })
        .meta({ id: 'FleetMcp', description: 'An MCP server name across the fleet; calls in `window`' }),
    ),
    ...page,
    window: timeRange.meta({
      description: 'The call window: from..to, default the last 7 days (calls counted by whole hours)',
    }),
    shadow: z
      .array(
        z.object({
          name: z.string(),
          calls: count('Tool-call events'),
          denied: count('Events with result denied'),
          errors: count('Events with result error'),
        }),
      )
      .meta({
        description:
          'MCP servers called in the window but configured on no device, most calls first: at most 100 (and 64 KiB)',
      }),
    shadow_total: count('Shadow MCP servers, all of them'),
    configured_never_called: z
      .array(z.object({ name: z.string(), devices: count('Devices where it is configured') }))
      .meta({
        description: 'MCP servers configured but not called in the window, by name: at most 100 (and 64 KiB)',
      }),
    configured_never_called_total: count('Configured MCP servers never called, all of them'),
  }),
);

// ---- fleet ----

export const fleetSummaryResponse = envelope(
  z
    .object({
      devices: z.object({
        total: count(),
        online: count(),
        offline: count(),
        never_reported: count(),
        new_24h: count('Enrolled in the last 24 hours'),
      }),
      agents_by_type: z
        .array(z.object({ agent_type: z.string(), devices: count() }))
        .meta({ description: 'Most devices first: at most 100' }),
      mcps_by_transport: z.array(
        z.object({
          transport,
          servers: count('Distinct MCP server names'),
          devices: count('Devices with at least one'),
          installs: count('Configurations (device × agent × MCP server × scope × config)'),
        }),
      ),
      events_24h: z
        .object({
          ...callMeasures,
          deny_rate: rate('denied / calls, 4 decimals; 0 without calls'),
          from: ts('Start, inclusive (24 hours ago, widened to the hour)'),
          to: ts('End, exclusive (now, widened to the hour)'),
        })
        .meta({ description: 'Tool-call events of the last 24 hours, by whole hours' }),
      online_threshold_seconds: onlineThreshold,
      as_of: asOf,
    })
    .meta({ id: 'FleetSummary' }),
);

export const fleetChangesResponse = envelope(
  z.object({
    changes: z.array(
      z
        .object({
          id: z.string().meta({ description: 'The change id (a positive integer, as a string)' }),
          at: isoTimestamp,
          kind: z.enum(CHANGE_KINDS),
          device_id: z.uuid(),
          serial_number: z.string(),
          agent_type: z.string(),
          mcp_name: z
            .string()
            .nullable()
            .meta({ description: 'null for agent_appeared / agent_disappeared' }),
        })
        .meta({ id: 'FleetChange' }),
    ),
    ...page,
  }),
);

// ---- events ----

/** The fields an event carries in every view. */
const eventCommon = {
  id: z.string().meta({
    description: 'The event id (a positive integer, as a string), unique: GET …/observability/events/{id}',
  }),
  event_id: z
    .uuid()
    .nullable()
    .meta({ description: 'The id the device gave the event (idempotency), if it gave one' }),
  device_id: z.uuid(),
  serial_number: z
    .string()
    .meta({ description: 'The serial number of the device when the event was received' }),
  source_ip: z
    .string()
    .nullable()
    .meta({ description: 'The address the events request came from, if known' }),
  received_at: ts('When the service stored it'),
  event_time: ts('When it happened, as the device reported'),
  agent_type: z.string(),
  mcp_name: z.string(),
  tool: z.string(),
  event_type: eventType,
  result: eventResult,
  deny_code: z.string().nullable().meta({ description: 'Set when result is denied' }),
  rule_applied: z
    .string()
    .nullable()
    .meta({ description: 'The policy rule that denied it; set when denied' }),
  model: z.string().nullable(),
  session_id: z.string().nullable(),
  group: z.string().nullable(),
  actor_email: z.string().nullable(),
  tokens_in: count(),
  tokens_out: count(),
  duration_ms: ms('Milliseconds'),
  prompt_truncated: z
    .boolean()
    .meta({ description: 'The prompt was longer than events.prompt_max_chars and was cut at ingest' }),
};

export const eventView = z
  .object({
    ...eventCommon,
    deny_reason: z
      .string()
      .nullable()
      .meta({ description: 'Set when denied; its first 200 characters (`truncated` names it when cut)' }),
    error_message: z.string().nullable().meta({
      description: 'Set when result is error; its first 200 characters (`truncated` names it when cut)',
    }),
    skills: z.array(z.string()).meta({
      description: 'At most 10 skills of at most 100 characters each (`truncated` names it when cut)',
    }),
    prompt_preview: z
      .string()
      .nullable()
      .meta({ description: 'The first 200 characters of the stored prompt' }),
    truncated: z
      .array(z.enum(['deny_reason', 'error_message', 'skills']))
      .meta({ description: 'The fields this view shortened; GET …/events/{id} gives them whole' }),
  })
  .meta({
    id: 'ObservabilityEvent',
    description: 'A tool-call event as lists show it (long text shortened)',
  });

export const eventDetail = z
  .object({
    ...eventCommon,
    deny_reason: z.string().nullable().meta({ description: 'Set when result is denied' }),
    error_message: z.string().nullable().meta({ description: 'Set when result is error' }),
    skills: z.array(z.string()),
    prompt: z
      .string()
      .nullable()
      .meta({ description: 'As stored: at most events.prompt_max_chars characters (prompt_truncated)' }),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'Free-form, as the device sent it; null when over 256 KiB (metadata_omitted)' }),
    metadata_omitted: z.boolean().meta({ description: 'metadata is over 256 KiB and left out' }),
  })
  .meta({ id: 'ObservabilityEventDetail', description: 'A tool-call event with every field as stored' });

/**
 * The fields of a read of stored events whose range reaches before the retention cutoff (retentionNotice in
 * shared/observability/ranges.ts), present together or not at all.
 */
const retentionNotice = (when: string) => ({
  archived_before: isoTimestamp.optional().meta({
    description: `Present when retention has removed events of the range (${when}): a dropped day that held events overlaps it. The instant is the retention cutoff: events older than \`events.retention\` are no longer in the database (their daily partitions were dropped). The summary still counts them from the rollups, kept for \`events.rollup_retention\``,
  }),
  archive_location: z.string().nullable().optional().meta({
    description:
      'With archived_before: where those events are, Parquet partitioned by dt=YYYY-MM-DD/hour=HH (`s3://<bucket>/<prefix>/events/`, the location of the Glue table `agent_control_plane_archive.events` that Athena queries, or a directory with `events.archive.target = "dir"`); null when no archive is configured and they were dropped',
  }),
});

export const eventListResponse = envelope(
  z.object({
    events: z.array(eventView).meta({ description: 'Newest first; at most `limit` and 512 KiB' }),
    ...page,
    ...retentionNotice('`from` before it, or no `from` and this is the last page'),
  }),
);
export const eventResponse = envelope(eventDetail);

const distinctValues = (what: string, min = 0) =>
  z
    .array(z.string())
    .min(min)
    .meta({ description: `Distinct ${what} of its events, sorted: at most 20` });
export const sessionResponse = envelope(
  z.object({
    session: z
      .object({
        session_id: z.string(),
        calls: z.number().int().min(1).meta({ description: 'Events of the session' }),
        first_event_at: isoTimestamp,
        last_event_at: isoTimestamp,
        allowed: count('Events with result allowed'),
        denied: count('Events with result denied'),
        errors: count('Events with result error'),
        tokens_in: count('Sum of the tokens_in of its events'),
        tokens_out: count('Sum of the tokens_out of its events'),
        duration_ms: ms('Sum of the duration_ms of its events, milliseconds'),
        devices: z
          .array(z.object({ device_id: z.uuid(), serial_number: z.string() }))
          .min(1)
          .meta({ description: 'Devices of its events, by serial number: at most 20' }),
        devices_total: count(),
        agent_types: distinctValues('agent types', 1),
        agent_types_total: count(),
        actors: distinctValues('actor emails'),
        actors_total: count(),
        models: distinctValues('models'),
        models_total: count(),
      })
      .meta({ id: 'ObservabilitySession', description: 'Totals over every event of the session' }),
    events: z.array(eventView).meta({ description: 'Its events, oldest first; at most `limit` and 512 KiB' }),
    ...page,
    ...retentionNotice(
      "the session's: retention has dropped a day that held events and began before its first stored event, so older events of the session may have been in it; on every page, and the totals count stored events only",
    ),
  }),
);

// ---- summary ----

const TOP_LISTS = ['tools', 'mcps', 'agents', 'actors', 'models', 'deny_codes', 'rules'] as const;
const source = (values: readonly [string, ...string[]], description: string) =>
  z.enum(values).meta({ description });
const durations = {
  duration_avg_ms: ms('Mean duration, milliseconds (rounded)'),
  duration_max_ms: ms('Longest duration, milliseconds'),
};
const percentileText = (p: string) =>
  `${p} duration, milliseconds (not rounded), from the duration sketch: within 2 % of percentile_cont over the events (docs/observability.md)`;
const percentileMs = (description: string) => z.number().min(0).meta({ description });
const percentile = (p: string) => percentileMs(percentileText(p));
const nullableMs = (description: string) => z.number().int().min(0).nullable().meta({ description });
const nullablePercentile = (description: string) => z.number().min(0).nullable().meta({ description });
const topEntry = (keys: Record<string, z.ZodType>, id: string, extra: Record<string, z.ZodType> = {}) =>
  z
    .object({
      ...keys,
      ...callMeasures,
      deny_rate: rate('denied / calls, 4 decimals'),
      ...durations,
      ...extra,
    })
    .meta({ id });

export const summaryResponse = envelope(
  z
    .object({
      range: z
        .object({ from: ts('Start, inclusive'), to: ts('End, exclusive'), bucket: z.enum(BUCKETS) })
        .meta({
          description:
            'The range summarized: from..to (default the last 24 hours) widened to whole hours (whole days for bucket=day); bucket defaults to hour up to 2 days, else day',
        }),
      actor_range: timeRange.meta({
        description: 'The range of the actor top list: widened to whole UTC days',
      }),
      source: z
        .object({
          calls: source(['rollups', 'events'], 'Where totals and top lists came from'),
          series: source(
            ['series', 'rollups', 'events', 'none'],
            'Where the series came from (none: parts=totals)',
          ),
          actors: source(
            ['rollups', 'events', 'none'],
            'Where the actor top list came from (none: parts=totals)',
          ),
        })
        .meta({
          description:
            'rollups / series: the pre-aggregated tables; events: the events of the range (filters no rollup holds)',
        }),
      filters: z
        .object({
          agent_type: z.string().optional(),
          mcp: z.string().optional(),
          tool: z.string().optional(),
          event_type: eventType.optional(),
          result: eventResult.optional(),
          deny_code: z.string().optional(),
          rule: z.string().optional(),
          model: z.string().optional(),
          actor: z.string().optional(),
          group: z.string().optional(),
          device_id: z.uuid().optional(),
          serial: z.string().optional(),
          session_id: z.string().optional(),
          skill: z.string().optional(),
          q: z.string().optional(),
        })
        .meta({ description: 'The event filters applied (those given in the query)' }),
      totals: z.object({
        calls: count('Tool-call events'),
        by_result: z.object({ allowed: count(), denied: count(), error: count() }),
        by_event_type: z.object({ invocation: count(), result: count(), error: count() }),
        denied: count('Events with result denied'),
        errors: count('Events with result error'),
        deny_rate: rate('denied / calls, 4 decimals; 0 without calls'),
        error_rate: rate('errors / calls, 4 decimals; 0 without calls'),
        tokens_in: count('Sum of the tokens_in of the events'),
        tokens_out: count('Sum of the tokens_out of the events'),
        duration_avg_ms: nullableMs('Mean duration, milliseconds (rounded); null without calls'),
        duration_p50_ms: nullablePercentile(`${percentileText('50th percentile')}; null without calls`),
        duration_p95_ms: nullablePercentile(`${percentileText('95th percentile')}; null without calls`),
        duration_p99_ms: nullablePercentile(`${percentileText('99th percentile')}; null without calls`),
        duration_max_ms: ms('Longest duration, milliseconds; 0 without calls'),
      }),
      top: z
        .object({
          tools: z.array(
            topEntry({ mcp_name: z.string(), tool: z.string() }, 'SummaryTopTool', {
              duration_p50_ms: percentile('50th percentile'),
              duration_p95_ms: percentile('95th percentile'),
              duration_p99_ms: percentile('99th percentile'),
            }),
          ),
          mcps: z.array(topEntry({ mcp_name: z.string() }, 'SummaryTopMcp')),
          agents: z.array(topEntry({ agent_type: z.string() }, 'SummaryTopAgent')),
          actors: z.array(topEntry({ actor_email: z.string() }, 'SummaryTopActor')),
          models: z.array(topEntry({ model: z.string() }, 'SummaryTopModel')),
          deny_codes: z.array(
            topEntry({ deny_code: z.string(), rule_applied: z.string() }, 'SummaryTopDenyCode'),
          ),
          rules: z.array(topEntry({ rule_applied: z.string() }, 'SummaryTopRule')),
        })
        .meta({
          description:
            'The `top` (default 10) names with most calls, most first, each list at most 32 KiB; deny_codes and rules count denied events only; actors are over actor_range; every list empty with parts=totals',
        }),
      top_truncated: z.array(z.enum(TOP_LISTS)).meta({
        description: 'Top lists the 32 KiB bound cut below `top` entries (only with very long names)',
      }),
      series: z
        .array(
          z.object({
            bucket: ts('Start of the bucket'),
            ...callMeasures,
            duration_p50_ms: nullablePercentile(
              `${percentileText('50th percentile')} of the bucket; null without calls`,
            ),
            duration_p95_ms: nullablePercentile(
              `${percentileText('95th percentile')} of the bucket; null without calls`,
            ),
            duration_p99_ms: nullablePercentile(
              `${percentileText('99th percentile')} of the bucket; null without calls`,
            ),
          }),
        )
        .meta({
          description:
            "Empty with parts=totals; else every bucket of the range, in order, zero (percentiles null) when empty; the percentiles of a bucket are those of its events, computed as the totals' are (minute buckets older than the events' retention that were stored before the series kept durations have null percentiles)",
        }),
    })
    .meta({ id: 'ObservabilitySummary' }),
);

// ---- filter values ----

const valueList = <T extends z.ZodType, N extends z.ZodType>(item: T, total: N) =>
  z.object({
    values: z.array(item),
    total,
    truncated: z.boolean().meta({ description: 'values lists fewer than there are' }),
  });
const counted = (value: z.ZodType = z.string()) =>
  z.object({ value, calls: count('Tool-call events in the range carrying it') });
const countedTotal = count('Distinct values in the range');
const sampledTotal = z.null().meta({ description: 'Always null: these values are not counted' });
export const countedFilterValues = valueList(counted(), countedTotal).meta({
  id: 'CountedFilterValues',
  description: 'Every value of the range with its calls, most calls first: at most `limit` (and 32 KiB)',
});

export const filtersResponse = envelope(
  z
    .object({
      range: timeRange.meta({ description: 'from..to (default the last 7 days), widened to whole hours' }),
      actor_range: timeRange.meta({ description: 'The range of actor and group: widened to whole UTC days' }),
      limit: z.number().int().min(1).max(MAX_LIMIT).meta({ description: 'Values per filter at most' }),
      sampled_events: count('Events sampled for session and skill: the latest of the range'),
      ...retentionNotice(
        '`from` before it; the session, skill, device and serial values then leave out the older events',
      ),
      values: z.object({
        agent_type: countedFilterValues,
        mcp: countedFilterValues,
        tool: countedFilterValues,
        event_type: valueList(counted(eventType), countedTotal),
        result: valueList(counted(eventResult), countedTotal),
        deny_code: countedFilterValues,
        rule: countedFilterValues,
        model: countedFilterValues,
        actor: countedFilterValues,
        group: countedFilterValues,
        device: valueList(
          z.object({ value: z.uuid(), serial_number: z.string(), last_event_at: isoTimestamp }),
          sampledTotal,
        ).meta({ description: 'Devices with events in the range, most recently active first' }),
        serial: valueList(z.object({ value: z.string() }), sampledTotal).meta({
          description: 'Serial numbers of those devices',
        }),
        session: valueList(
          z.object({
            value: z.string(),
            calls: count('Sampled events carrying it'),
            last_event_at: isoTimestamp,
          }),
          sampledTotal,
        ).meta({ description: 'Sessions of the sampled events, most recent first' }),
        skill: valueList(
          z.object({ value: z.string(), calls: count('Sampled events carrying it') }),
          sampledTotal,
        ).meta({ description: 'Skills of the sampled events, most calls first' }),
      }),
    })
    .meta({ id: 'ObservabilityFilterValues' }),
);
