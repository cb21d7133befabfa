// Stored records as OCSF 1.8.0 events, one function per class: a tool call as API Activity (6003, with the
// ai_operation and security_control profiles), a device's inventory as Device Inventory Info (5001) and Software
// Inventory Info (5020), a request's grant and its end as User Access Management (3005), a proxied query as Datastore
// Activity (6005) and an alert as Detection Finding (2004). What each emits is written down, with the schema files it
// follows, in ocsf-1.8.0-<class>.schema.json; the pieces they share are in ocsf-objects.ts.
import {
  ALLOWED,
  BLOCKED,
  classification,
  epochMs,
  FAILURE,
  ipOf,
  metadataOf,
  type OcsfClassification,
  type OcsfControlledOutcome,
  type OcsfMetadata,
  type OcsfSeverity,
  type OcsfUser,
  SEVERITY,
  SUCCESS,
  SYSTEM_USER,
  userOf,
} from './ocsf-objects.ts';
import {
  type AccessChangeSource,
  type AlertSource,
  type DatastoreQuerySource,
  type DeviceInventorySource,
  type ExportSource,
  errorTypeOf,
  ruleOf,
  timesOf,
} from './source.ts';

export { OCSF_VERSION } from './ocsf-objects.ts';

/** API Activity defines Create/Read/Update/Delete; a tool call is none of them, so Other with the source's label. */
const INVOKE = 99;

const CALL_SEVERITY = {
  allowed: SEVERITY.informational,
  error: SEVERITY.low,
  denied: SEVERITY.medium,
} as const;

export interface OcsfPolicy {
  uid: string;
  name: string;
  version?: string;
}

export interface OcsfApiActivity
  extends OcsfClassification<'apiActivity', typeof INVOKE>,
    OcsfControlledOutcome {
  time: number;
  start_time: number;
  end_time: number;
  duration: number;
  policy?: OcsfPolicy;
  api: { operation: 'tools/call'; service: { name: string }; request?: { uid: string } };
  resources: { name: string; type: 'MCP Tool' }[];
  actor: { app_name: string; user?: OcsfUser; session?: { uid: string } };
  src_endpoint: { uid: string; name: string; ip?: string };
  message_context: {
    uid?: string;
    ai_role_id: 3;
    ai_role: 'Tool';
    service: { name: string };
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
  };
  metadata: OcsfMetadata;
}

/** The call as an OCSF 1.8.0 API Activity event. */
export function toOcsfApiActivity(source: ExportSource): OcsfApiActivity {
  const { event } = source;
  const { startMs, endMs } = timesOf(source);
  const denied = event.result === 'denied';
  const errorType = errorTypeOf(source);
  const out: OcsfApiActivity = {
    ...classification('apiActivity', INVOKE, 'Invoke'),
    time: startMs,
    start_time: startMs,
    end_time: endMs,
    duration: event.duration_ms,
    ...CALL_SEVERITY[event.result],
    ...(errorType === undefined ? SUCCESS : { ...FAILURE, status_code: errorType }),
    ...(denied ? BLOCKED : ALLOWED),
    api: { operation: 'tools/call', service: { name: event.mcp_name } },
    resources: [{ name: event.tool, type: 'MCP Tool' }],
    actor: { app_name: event.agent_type },
    src_endpoint: { uid: event.device_id, name: event.serial_number },
    message_context: {
      ai_role_id: 3,
      ai_role: 'Tool',
      service: { name: event.mcp_name },
      prompt_tokens: event.tokens_in,
      completion_tokens: event.tokens_out,
      total_tokens: event.tokens_in + event.tokens_out,
    },
    metadata: metadataOf(event.id, {
      profiles: ['ai_operation', 'security_control'],
      logged_time: epochMs(event.received_at),
    }),
  };
  if (denied && event.rule_applied !== null) {
    const rule = ruleOf(event.rule_applied);
    out.policy = {
      uid: event.rule_applied,
      name: rule.id,
      ...(rule.version ? { version: rule.version } : {}),
    };
  }
  if (source.tool_call_id !== undefined) out.api.request = { uid: source.tool_call_id };
  // user.json asks for at least one of account, name and uid: the email is the name developers sign in with.
  if (event.actor_email !== null) out.actor.user = { name: event.actor_email, email_addr: event.actor_email };
  if (event.session_id !== null) {
    out.actor.session = { uid: event.session_id };
    out.message_context.uid = event.session_id;
    out.metadata.correlation_uid = event.session_id;
  }
  const ip = ipOf(event.source_ip);
  if (ip !== undefined) out.src_endpoint.ip = ip;
  return out;
}

// ---- Discovery: Device Inventory Info (5001), Software Inventory Info (5020) ----

/** Discovery's activity: the inventory is collected by the endpoint agent and reported, not read from a log. */
const COLLECT = 2;
/** A version the inventory does not know: package.version is required. */
export const UNKNOWN_VERSION = 'unknown';
/** Our endpoint agent, in the device's agent_list (agent type_id 99 Other: it is no EDR, DLP or MDM sensor). */
export const ENDPOINT_AGENT_NAME = 'Agent Control Plane agent';

export interface OcsfDevice {
  uid: string;
  name: string;
  type_id: 0;
  type: 'Unknown';
  vendor_name: string;
  model: string;
  hw_info: { serial_number: string };
  owner: OcsfUser;
  first_seen_time: number;
  last_seen_time?: number;
  agent_list?: { name: string; type_id: 99; type: string; version: string }[];
}

/** The device: the service knows its serial, brand and model, its owner and when it was enrolled and last seen. */
export function ocsfDeviceOf(device: DeviceInventorySource['device']): OcsfDevice {
  const out: OcsfDevice = {
    uid: device.id,
    name: device.serial_number,
    // Enrolled developer machines: laptop or desktop, which the service is not told.
    type_id: 0,
    type: 'Unknown',
    vendor_name: device.brand,
    model: device.model,
    hw_info: { serial_number: device.serial_number },
    owner: userOf({ uid: device.owner_subject, email: device.owner_email }),
    first_seen_time: epochMs(device.created_at),
  };
  if (device.last_seen_at !== null) out.last_seen_time = epochMs(device.last_seen_at);
  if (device.agent_version !== null) {
    out.agent_list = [
      { name: ENDPOINT_AGENT_NAME, type_id: 99, type: 'AI agent control', version: device.agent_version },
    ];
  }
  return out;
}

export interface OcsfDeviceInventory extends OcsfClassification<'deviceInventory', typeof COLLECT> {
  time: number;
  severity_id: 1;
  severity: 'Informational';
  message: string;
  device: OcsfDevice;
  metadata: OcsfMetadata;
}

/** When the inventory was reported (the last report; a device that never sent one is as of the read). */
const inventoryTime = (source: DeviceInventorySource): number =>
  epochMs(source.device.last_inventory_at ?? source.as_of);

/** The device as Device Inventory Info: one event per inventory report. */
export function toOcsfDeviceInventory(source: DeviceInventorySource): OcsfDeviceInventory {
  const time = inventoryTime(source);
  const { device } = source;
  return {
    ...classification('deviceInventory', COLLECT, 'Collect'),
    time,
    ...SEVERITY.informational,
    message: `${device.agents} agents, ${device.mcps} MCP servers`,
    device: ocsfDeviceOf(device),
    metadata: metadataOf(`inventory:${device.id}:${time}`),
  };
}

export interface OcsfPackage {
  name: string;
  version: string;
  type_id: 1;
  type: 'Application';
  package_manager?: string;
  purl?: string;
}

export interface OcsfSoftwareInventory extends OcsfClassification<'softwareInventory', typeof COLLECT> {
  time: number;
  severity_id: 1;
  severity: 'Informational';
  device: OcsfDevice;
  package: OcsfPackage;
  metadata: OcsfMetadata;
}

type InventoryMcp = DeviceInventorySource['mcps'][number];

/** A package URL for the registries purl defines a form for (npm and PyPI), when the version is pinned. */
function purlOf(source: NonNullable<InventoryMcp['source']>): string | undefined {
  if (source.version === undefined) return undefined;
  if (source.type === 'npm') return `pkg:npm/${source.name.replace(/^@/, '%40')}@${source.version}`;
  if (source.type === 'pypi') return `pkg:pypi/${source.name.toLowerCase()}@${source.version}`;
  return undefined;
}

function mcpPackage(mcp: InventoryMcp): OcsfPackage {
  const out: OcsfPackage = {
    name: mcp.source?.name ?? mcp.name,
    version: mcp.source?.version ?? UNKNOWN_VERSION,
    type_id: 1,
    type: 'Application',
  };
  if (mcp.source && ['npm', 'pypi', 'oci'].includes(mcp.source.type)) {
    out.package_manager = mcp.source.type;
  }
  const purl = mcp.source ? purlOf(mcp.source) : undefined;
  if (purl !== undefined) out.purl = purl;
  return out;
}

/**
 * The device's software as Software Inventory Info, one event per package (the class holds one): each AI agent
 * (its agent type and version) and each MCP server configured in it (its source identity, else its name). Which
 * agent an MCP server is configured in, its name there and its transport are the event's metadata.labels.
 */
export function toOcsfSoftwareInventory(source: DeviceInventorySource): OcsfSoftwareInventory[] {
  const device = ocsfDeviceOf(source.device);
  const base = {
    ...classification('softwareInventory', COLLECT, 'Collect'),
    ...SEVERITY.informational,
    device,
  };
  const id = source.device.id;
  const agents = source.agents.map((agent): OcsfSoftwareInventory => {
    const time = epochMs(agent.last_seen_at);
    return {
      ...base,
      time,
      package: {
        name: agent.agent_type,
        version: agent.version ?? UNKNOWN_VERSION,
        type_id: 1,
        type: 'Application',
      },
      metadata: metadataOf(`software:${id}:${agent.agent_type}:${time}`, {
        labels: ['ai_agent', `agent_type:${agent.agent_type}`],
      }),
    };
  });
  const mcps = source.mcps.map((mcp): OcsfSoftwareInventory => {
    const time = epochMs(mcp.last_seen_at);
    const labels = [
      'mcp_server',
      `agent_type:${mcp.agent_type}`,
      `mcp_name:${mcp.name}`,
      `transport:${mcp.transport}`,
    ];
    if (mcp.scope !== null) labels.push(`scope:${mcp.scope}`);
    if (!mcp.enabled) labels.push('disabled');
    const key = [id, mcp.agent_type, mcp.name, mcp.scope ?? '', mcp.fingerprint ?? '', time].join(':');
    return { ...base, time, package: mcpPackage(mcp), metadata: metadataOf(`software:${key}`, { labels }) };
  });
  return [...agents, ...mcps];
}

// ---- Identity & Access Management: User Access Management (3005) ----

/** The audit actions of a request's grant and of its end, and the activity each is. */
export const ACCESS_ACTIVITIES = {
  'request.approved': { id: 1, name: 'Assign Privileges' },
  'request.revoked': { id: 2, name: 'Revoke Privileges' },
  'request.expired': { id: 2, name: 'Revoke Privileges' },
} as const;
export type AccessAction = keyof typeof ACCESS_ACTIVITIES;
/** What an approved request lets its requester do: run read-only queries through the proxy. */
export const ACCESS_PRIVILEGE = 'query';

export interface OcsfUserAccess extends OcsfClassification<'userAccess', 1 | 2> {
  time: number;
  severity_id: 1;
  severity: 'Informational';
  status_id: 1;
  status: 'Success';
  message: string;
  user: OcsfUser;
  actor: { user: OcsfUser };
  privileges: string[];
  resources: { uid: string; name: string; type: 'Dataset' }[];
  src_endpoint?: { ip: string };
  metadata: OcsfMetadata;
}

const isAccessAction = (action: string): action is AccessAction => Object.hasOwn(ACCESS_ACTIVITIES, action);

/** A request's approval, revocation or expiry as User Access Management; undefined for any other audit action. */
export function toOcsfUserAccess(source: AccessChangeSource): OcsfUserAccess | undefined {
  const { audit, request } = source;
  if (!isAccessAction(audit.action_type)) return undefined;
  const activity = ACCESS_ACTIVITIES[audit.action_type];
  const namespaces = request.scope.datasources.flatMap((d) => d.datasets.map((s) => s.namespace));
  const what = audit.action_type.slice('request.'.length);
  const until = request.valid_until === null ? 'with no end' : `until ${request.valid_until}`;
  const out: OcsfUserAccess = {
    ...classification('userAccess', activity.id, activity.name),
    time: epochMs(audit.timestamp),
    ...SEVERITY.informational,
    ...SUCCESS,
    message:
      audit.action_type === 'request.approved'
        ? `Request ${request.id} approved: ${ACCESS_PRIVILEGE} on ${namespaces.join(', ')} ${until}`
        : `Request ${request.id} ${what}`,
    user: userOf({ uid: request.requester.id, name: request.requester.name, email: request.requester.email }),
    // The scheduled expiry records the service itself as the actor; people are recorded with their email.
    actor: {
      user: audit.actor_email.includes('@')
        ? userOf({ uid: audit.actor_id, email: audit.actor_email })
        : SYSTEM_USER,
    },
    privileges: [ACCESS_PRIVILEGE],
    resources: namespaces.map((name) => ({ uid: `${request.id}/${name}`, name, type: 'Dataset' })),
    metadata: metadataOf(`audit:${audit.id}`, {
      logged_time: epochMs(audit.created_at),
      correlation_uid: request.id,
    }),
  };
  const ip = ipOf(audit.ip_address);
  if (ip !== undefined) out.src_endpoint = { ip };
  return out;
}

// ---- Application Activity: Datastore Activity (6005) ----

const QUERY = 4;

export interface OcsfDatastoreActivity
  extends OcsfClassification<'datastoreActivity', typeof QUERY>,
    OcsfControlledOutcome {
  time: number;
  duration?: number;
  actor: { user: OcsfUser };
  src_endpoint: { ip: string } | { name: string };
  database: { uid: string; name: string; type_id: 1; type: 'Relational' };
  type_id: 1;
  type: 'Database';
  unmapped?: { sql_sha256?: string; row_count?: number; truncated?: boolean };
  metadata: OcsfMetadata;
}

type QuerySeverity = typeof SEVERITY.informational | typeof SEVERITY.low | typeof SEVERITY.medium;
/** Per usage action: an executed query, one that failed in the database (or any action not known here), one refused. */
const QUERY_OUTCOME: Record<string, { severity: QuerySeverity; failed: boolean; refused: boolean }> = {
  query: { severity: SEVERITY.informational, failed: false, refused: false },
  query_failed: { severity: SEVERITY.low, failed: true, refused: false },
  query_refused: { severity: SEVERITY.medium, failed: true, refused: true },
};
const UNKNOWN_OUTCOME = { severity: SEVERITY.low, failed: true, refused: false };

const textOf = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const intOf = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/**
 * A proxied query as Datastore Activity (Query): who ran it, from where, on which request's environment, and how it
 * ended. The statement itself is never exported; its SHA-256, as the usage event records it, is.
 */
export function toOcsfDatastoreActivity(source: DatastoreQuerySource): OcsfDatastoreActivity {
  const { usage, request } = source;
  const meta = (usage.metadata ?? {}) as Record<string, unknown>;
  const outcome = QUERY_OUTCOME[usage.action_type] ?? UNKNOWN_OUTCOME;
  const errorCode = textOf(meta.error) ?? usage.action_type;
  const ip = ipOf(usage.ip_address);
  const out: OcsfDatastoreActivity = {
    ...classification('datastoreActivity', QUERY, 'Query'),
    time: epochMs(usage.timestamp),
    ...outcome.severity,
    ...(outcome.failed ? { ...FAILURE, status_code: errorCode } : SUCCESS),
    ...(outcome.refused ? BLOCKED : ALLOWED),
    actor: { user: userOf({ uid: textOf(meta.actor_id), email: textOf(meta.actor_email) }) },
    src_endpoint: ip === undefined ? { name: usage.ip_address || 'unknown' } : { ip },
    database: {
      uid: request.environment_id ?? request.id,
      name: request.datasource_names.join(', ') || request.id,
      type_id: 1,
      type: 'Relational',
    },
    type_id: 1,
    type: 'Database',
    metadata: metadataOf(`usage:${usage.id}`, {
      profiles: ['security_control'],
      correlation_uid: request.id,
    }),
  };
  const duration = intOf(meta.duration_ms);
  if (duration !== undefined) out.duration = duration;
  const unmapped: NonNullable<OcsfDatastoreActivity['unmapped']> = {};
  const sha = textOf(meta.sql_sha256);
  if (sha !== undefined) unmapped.sql_sha256 = sha;
  const rows = intOf(meta.row_count);
  if (rows !== undefined) unmapped.row_count = rows;
  if (typeof meta.truncated === 'boolean') unmapped.truncated = meta.truncated;
  if (Object.keys(unmapped).length > 0) out.unmapped = unmapped;
  return out;
}

// ---- Findings: Detection Finding (2004) ----

const RULE = { type_id: 1, type: 'Rule' } as const;
const STATISTICAL = { type_id: 3, type: 'Statistical' } as const;

/** Per alert kind: its title, how bad it is, and how it is found (analytic type_id 1 Rule, 3 Statistical). */
export const ALERT_FINDINGS: Record<
  AlertSource['kind'],
  readonly [title: string, severity: OcsfSeverity, analytic: typeof RULE | typeof STATISTICAL]
> = {
  new_server: ['New MCP server', SEVERITY.low, RULE],
  version_changed: ['MCP server version changed', SEVERITY.informational, RULE],
  source_changed: ['MCP server source changed', SEVERITY.medium, RULE],
  denied_server: ['MCP server denied by policy', SEVERITY.medium, RULE],
  denied_spike: ['Spike in denied tool calls', SEVERITY.medium, STATISTICAL],
  tool_definition_changed: ['Tool definition changed', SEVERITY.high, RULE],
};

export interface OcsfDetectionFinding extends OcsfClassification<'detectionFinding', 1 | 2> {
  time: number;
  start_time: number;
  end_time: number;
  severity_id: 1 | 2 | 3 | 4;
  severity: 'Informational' | 'Low' | 'Medium' | 'High';
  status_id: 1 | 2;
  status: 'New' | 'In Progress';
  is_alert: true;
  message: string;
  finding_info: {
    uid: string;
    title: string;
    types: string[];
    analytic: { uid: string; name: string; type_id: 1 | 3; type: 'Rule' | 'Statistical' };
    created_time: number;
    first_seen_time: number;
    last_seen_time: number;
    modified_time: number;
  };
  resources?: { name: string; type: 'MCP Server' }[];
  metadata: OcsfMetadata;
}

/**
 * An alert at `revision` (how many changes it has had since it opened: more devices or other details found, its
 * acknowledgement) as Detection Finding: Create as opened, Update after any change; status New while open, In
 * Progress once acknowledged (an admin has seen it; nothing says it is resolved). Each revision is its own event
 * (metadata.uid), so a SIEM that drops repeats of an event keeps every change. The server it is about is the affected
 * resource.
 */
export function toOcsfDetectionFinding(alert: AlertSource, revision: number): OcsfDetectionFinding {
  const [title, severity, analytic] = ALERT_FINDINGS[alert.kind];
  const acknowledged = alert.acknowledged_at !== null;
  const first = epochMs(alert.first_seen_at);
  const last = epochMs(alert.last_seen_at);
  const activity = revision > 0 ? { id: 2 as const, name: 'Update' } : { id: 1 as const, name: 'Create' };
  const out: OcsfDetectionFinding = {
    ...classification('detectionFinding', activity.id, activity.name),
    time: first,
    start_time: first,
    end_time: last,
    ...severity,
    ...(acknowledged ? { status_id: 2, status: 'In Progress' } : { status_id: 1, status: 'New' }),
    is_alert: true,
    message: `${alert.subject} (${alert.device_count} ${alert.device_count === 1 ? 'device' : 'devices'})`,
    finding_info: {
      uid: alert.id,
      title: `${title}: ${alert.subject}`,
      types: [alert.kind],
      analytic: { uid: alert.kind, name: alert.kind, ...analytic },
      created_time: first,
      first_seen_time: first,
      last_seen_time: last,
      modified_time: alert.acknowledged_at === null ? last : Math.max(last, epochMs(alert.acknowledged_at)),
    },
    metadata: metadataOf(`alert:${alert.id}:${revision}`, { correlation_uid: alert.id }),
  };
  const server = textOf(alert.details.identity) ?? textOf(alert.details.name);
  if (server !== undefined) out.resources = [{ name: server, type: 'MCP Server' }];
  return out;
}
