// Rows of the route table for the admin observability endpoints; merged into shared/routes.ts.
// Each endpoint is given under /v1/admin/* and, as the spec says, also under /admin/* (withUnversionedAliases: an
// alias row naming the same handler file, so both share one Lambda).
import { defineRoute, withUnversionedAliases } from '../core/http/route.ts';
import {
  agentListResponse,
  deviceDetailResponse,
  deviceIdParams,
  deviceListResponse,
  eventIdParams,
  eventListResponse,
  eventResponse,
  filtersQuery,
  filtersResponse,
  fleetChangesQuery,
  fleetChangesResponse,
  fleetSummaryResponse,
  listAgentsQuery,
  listDevicesQuery,
  listEventsQuery,
  listMcpsQuery,
  mcpListResponse,
  sessionParams,
  sessionQuery,
  sessionResponse,
  summaryQuery,
  summaryResponse,
} from './schemas.ts';

export const obsListDevices = defineRoute({
  method: 'GET',
  path: '/v1/admin/devices',
  handler: 'observability/devices-list',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'Devices of the fleet: filters (owner, serial/model search, status, updated_since, last_seen_before), sort, keyset cursor',
  query: listDevicesQuery,
  response: deviceListResponse,
});

export const obsGetDevice = defineRoute({
  method: 'GET',
  path: '/v1/admin/devices/{id}',
  handler: 'observability/devices-get',
  auth: 'admin',
  tags: ['observability'],
  summary: 'One device: certificate, owner, current agents and MCPs with first/last seen, recent events',
  description:
    'At most 200 agents and 500 MCPs (and 128 / 256 KiB of them): agents_total / mcps_total count them all, agents_truncated / mcps_truncated say when the lists are shorter. The 20 latest events. online_threshold_seconds is the threshold the status used.',
  params: deviceIdParams,
  response: deviceDetailResponse,
  errors: [404],
});

export const obsListAgents = defineRoute({
  method: 'GET',
  path: '/v1/admin/agents',
  handler: 'observability/agents-list',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'One row per agent type across the fleet: devices, MCPs enabled/disabled, transports, first/last seen, calls',
  query: listAgentsQuery,
  response: agentListResponse,
});

export const obsListMcps = defineRoute({
  method: 'GET',
  path: '/v1/admin/mcps',
  handler: 'observability/mcps-list',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'One row per MCP server name: devices, enabled/disabled, transports, agent types, calls; shadow and never-called lists',
  query: listMcpsQuery,
  response: mcpListResponse,
});

export const obsFleetSummary = defineRoute({
  method: 'GET',
  path: '/v1/admin/fleet/summary',
  handler: 'observability/fleet-summary',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'Devices total/online/offline/new in 24 h, agents by type, MCPs by transport, events and deny rate in 24 h',
  response: fleetSummaryResponse,
});

export const obsFleetChanges = defineRoute({
  method: 'GET',
  path: '/v1/admin/fleet/changes',
  handler: 'observability/fleet-changes',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'Inventory changes (agent / MCP appeared or disappeared on a device), newest first, keyset-paginated',
  query: fleetChangesQuery,
  response: fleetChangesResponse,
});

export const obsListEvents = defineRoute({
  method: 'GET',
  path: '/v1/admin/observability/events',
  handler: 'observability/events-list',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'MCP tool-call events, newest first, filtered, keyset (cursor) pagination stable while events arrive',
  description:
    'A page holds `limit` events, or fewer when they would pass 512 KiB (next_cursor then continues after the last one). List items shorten deny_reason and error_message to 200 characters and skills to 10 names of 100 characters, name the shortened fields in `truncated`, carry a 200-character prompt_preview and no metadata: GET /v1/admin/observability/events/{id} returns the stored values. The first page pins the newest event id into the cursor: events arriving later never shift the walk. A cursor is bound to the filters it was issued for.',
  query: listEventsQuery,
  response: eventListResponse,
});

export const obsGetEvent = defineRoute({
  method: 'GET',
  path: '/v1/admin/observability/events/{id}',
  handler: 'observability/events-get',
  auth: 'admin',
  tags: ['observability'],
  summary: 'One MCP tool-call event with its prompt as stored and metadata',
  params: eventIdParams,
  response: eventResponse,
  errors: [404],
});

export const obsGetSession = defineRoute({
  method: 'GET',
  path: '/v1/admin/observability/sessions/{session_id}',
  handler: 'observability/sessions-get',
  auth: 'admin',
  tags: ['observability'],
  summary: "A session's calls in order with its totals",
  description:
    'Events oldest first, as the event list shows them (shortened text, pages of at most 512 KiB); the session header lists at most 20 devices, agent types, actors and models, with *_total counts.',
  params: sessionParams,
  query: sessionQuery,
  response: sessionResponse,
  errors: [404],
});

export const obsObservabilitySummary = defineRoute({
  method: 'GET',
  path: '/v1/admin/observability/summary',
  handler: 'observability/summary',
  auth: 'admin',
  tags: ['observability'],
  summary:
    'Totals, deny rate, top N, tokens, duration percentiles and a time series over a range, with the event filters',
  description:
    'Default range: the last 24 hours. The range is widened to whole hours (whole UTC days for bucket=day, the default above 2 days) and the actor section to whole UTC days; `range` and `actor_range` state them. Percentiles come from a duration sketch: within 2 % of percentile_cont over the events. `parts=totals` computes the totals alone (top lists and series empty, their sources `none`). `source` says what each part was computed from: rollups, the series table, or the events (filters on device, serial, session, skill or free text, and actor / group for the call figures, read the events of the range). A series has at most 1,500 points. Each top list is cut at 32 KiB (named in top_truncated).',
  query: summaryQuery,
  response: summaryResponse,
});

export const obsObservabilityFilters = defineRoute({
  method: 'GET',
  path: '/v1/admin/observability/filters',
  handler: 'observability/filters',
  auth: 'admin',
  tags: ['observability'],
  summary: 'The values each event filter can take in a range, with call counts',
  description:
    "Default range: the last 7 days. Each list is {values, total, truncated}, at most `limit` (1..100, default 50) values and 32 KiB. agent_type, mcp, tool, event_type, result, deny_code, rule, model (hourly / daily rollups) and actor, group (daily rollups): every value with its calls, most calls first, total = how many there are. device and serial: the devices with events in the range, most recently active first (no count). session and skill: the values carried by the range's 5,000 latest events (sessions most recent first, skills by calls in that sample), total null: no rollup holds these high-cardinality values.",
  query: filtersQuery,
  response: filtersResponse,
});

export const observabilityRoutes = withUnversionedAliases({
  obsListDevices,
  obsGetDevice,
  obsListAgents,
  obsListMcps,
  obsFleetSummary,
  obsFleetChanges,
  obsListEvents,
  obsGetEvent,
  obsGetSession,
  obsObservabilitySummary,
  obsObservabilityFilters,
});
