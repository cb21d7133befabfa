// Query, path and response schemas of the admin observability endpoints (issue 4): devices, agents, MCPs, fleet,
// the event browser, sessions and the summary. Every list is bounded (limit 1..100, default 20) and paginated by an
// opaque keyset cursor; every filter is validated here, so a bad value is 400 naming it.
import * as z from 'zod';
import { DEFAULT_LIMIT, envelope, isoTimestamp, MAX_LIMIT } from './common.ts';

const limit = z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT);
// A cursor holds the last row's sort key as JSON: a 400-character name of control characters is 2,400 characters
// escaped, 3,300 in base64url.
const cursor = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[A-Za-z0-9_-]+$/, { message: 'must be a cursor returned by this endpoint' })
  .optional();
const text = (max = 320) => z.string().trim().min(1).max(max).optional();
const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' }).optional();
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
  q: text(200),
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
export const summaryQuery = z
  .object({
    ...eventFilterShape,
    bucket: z.enum(BUCKETS).optional(),
    top: z.coerce.number().int().min(1).max(50).default(10),
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

// ---- responses (documented shapes; the domain functions build them) ----

const nullableTs = isoTimestamp.nullable();
const page = { next_cursor: z.string().nullable(), limit: z.number().int() };

export const deviceListItem = z
  .object({
    id: z.string(),
    serial_number: z.string(),
    brand: z.string(),
    model: z.string(),
    owner_subject: z.string(),
    owner_email: z.string(),
    status: z.enum(['online', 'offline', 'never_reported']),
    last_seen_at: nullableTs,
    last_inventory_at: nullableTs,
    last_event_at: nullableTs,
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    agents: z.number().int(),
    mcps: z.number().int(),
  })
  .meta({ id: 'FleetDevice' });

export const deviceListResponse = envelope(
  z.object({ devices: z.array(deviceListItem), online_threshold_seconds: z.number(), ...page }),
);
export const deviceDetailResponse = envelope(z.looseObject({ device: deviceListItem }));
const agg = z.looseObject({ calls: z.number() });
export const agentListResponse = envelope(z.looseObject({ agents: z.array(z.looseObject({})), ...page }));
export const mcpListResponse = envelope(
  z.looseObject({
    mcps: z.array(z.looseObject({})),
    shadow: z.array(agg),
    configured_never_called: z.array(z.looseObject({})),
    ...page,
  }),
);
export const fleetSummaryResponse = envelope(z.looseObject({ devices: z.looseObject({}) }));
export const fleetChangesResponse = envelope(z.looseObject({ changes: z.array(z.looseObject({})), ...page }));
export const eventView = z
  .looseObject({ id: z.string(), event_time: isoTimestamp, result: z.string() })
  .meta({ id: 'ObservabilityEvent' });
export const eventListResponse = envelope(z.looseObject({ events: z.array(eventView), ...page }));
export const eventResponse = envelope(eventView);
export const sessionResponse = envelope(
  z.looseObject({ session: z.looseObject({}), events: z.array(eventView) }),
);
export const summaryResponse = envelope(z.looseObject({ totals: z.looseObject({}), series: z.array(agg) }));
export const filtersResponse = envelope(z.looseObject({ values: z.looseObject({}) }));
