// The drizzle schema of every resource of the spec. The SQL in migrations/ is generated from this file
// (`npm run db:generate`) plus hand-written migrations for what drizzle-kit cannot express (triggers).
// Rules that follow from the RDS Data API (../shared/docs/pitfalls.md): no Postgres enums (text + check),
// no array parameters (lists are jsonb), timestamps are timestamptz.
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { xid8 } from './column-types.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();
const updatedAt = () => ts('updated_at').notNull().defaultNow();
const id = () => uuid('id').primaryKey().defaultRandom();

export const users = pgTable(
  'users',
  {
    id: id(),
    email: text('email').notNull(),
    name: text('name').notNull().default(''),
    passwordHash: text('password_hash'),
    roles: jsonb('roles').$type<string[]>().notNull().default(['user']),
    // A person of the identity provider (auth.provider = "idp"): its `sub`, by which its tokens find this row (the
    // row is made at the first sight of the subject, shared/core/auth/caller.ts). NULL: a local user.
    idpSubject: text('idp_subject'),
    // Set: the account is disabled; its tokens are refused at once (401) and it cannot sign in.
    disabledAt: ts('disabled_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Local users sign in by email, so theirs is unique; an IdP's people are told apart by their subject.
    uniqueIndex('users_email_key').on(sql`lower(${t.email})`).where(sql`${t.idpSubject} IS NULL`),
    uniqueIndex('users_idp_subject_key').on(t.idpSubject),
    index('users_created_at_idx').on(t.createdAt),
  ],
);

/** The device list's last-seen sort key (a device never seen sorts as the epoch), as listDevices writes it. */
const lastSeenKey = (lastSeenAt: AnyPgColumn) => sql`coalesce(${lastSeenAt}, 'epoch'::timestamptz)`;
/** Whether a device has reported (inventory or events), as reportedSql (shared/observability/fleet/stats.ts) writes it. */
const reported = (t: { lastInventoryAt: AnyPgColumn; lastEventAt: AnyPgColumn }) =>
  sql`(${t.lastInventoryAt} IS NOT NULL OR ${t.lastEventAt} IS NOT NULL)`;

export const devices = pgTable(
  'devices',
  {
    id: id(),
    serialNumber: text('serial_number').notNull(),
    brand: text('brand').notNull(),
    model: text('model').notNull(),
    ownerSubject: text('owner_subject').notNull(),
    ownerEmail: text('owner_email').notNull().default(''),
    certificateFingerprint: text('certificate_fingerprint').notNull(),
    certificatePem: text('certificate_pem').notNull(),
    keyType: text('key_type').notNull(),
    certNotBefore: ts('cert_not_before').notNull(),
    certNotAfter: ts('cert_not_after').notNull(),
    lastSeenAt: ts('last_seen_at'),
    lastInventoryAt: ts('last_inventory_at'),
    // The transaction of the last inventory report: the inventory exports' position (shared/exports/delivery/classes.ts),
    // read only once it is older than every running transaction, so a report committed late is never behind a cursor.
    inventoryXid: xid8('inventory_xid'),
    // The version of the endpoint agent that sent the last inventory; null when that agent did not say.
    agentVersion: text('agent_version'),
    lastEventAt: ts('last_event_at'),
    // The agent's own counters of events it could not deliver, cumulative since its spool was created, as it last
    // reported them with a batch (POST /v1/devices/events, `spool`): dropped unsent to stay under the spool's size
    // bound, torn by a crash mid-write, refused by this service (e.g. older than the retention window). NULL: never
    // reported (an agent that does not send them).
    spoolDropped: bigint('spool_dropped', { mode: 'number' }),
    spoolTorn: bigint('spool_torn', { mode: 'number' }),
    spoolRefused: bigint('spool_refused', { mode: 'number' }),
    spoolReportedAt: ts('spool_reported_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    // The device as the fleet's device counters last counted it (shared/observability/fleet/stats.ts): counted at all, and
    // its last-seen time if it had reported (NULL: never reported). Writers of the status columns set stats_dirty.
    statsCounted: boolean('stats_counted').notNull().default(false),
    statsSeenAt: ts('stats_seen_at'),
    statsDirty: boolean('stats_dirty').notNull().default(true),
    // An admin released the device (POST /v1/admin/devices/{id}/release): the next user who registers it becomes its
    // owner. NULL: it stays with its owner, and another user's registration is 409 device_owned_by_another_user.
    releasedAt: ts('released_at'),
  },
  (t) => [
    uniqueIndex('devices_serial_brand_key').on(t.serialNumber, t.brand),
    uniqueIndex('devices_fingerprint_key').on(t.certificateFingerprint),
    index('devices_owner_idx').on(t.ownerSubject),
    index('devices_last_seen_idx').on(t.lastSeenAt),
    // The device counters' fold finds the devices to count on this one, and the fleet summary counts the devices
    // last counted in the minute of its online threshold on the next (shared/observability/fleet/stats.ts).
    index('devices_stats_dirty_idx').on(t.id).where(sql`${t.statsDirty}`),
    index('devices_stats_seen_idx').on(t.statsSeenAt),
    index('devices_updated_at_idx').on(t.updatedAt),
    index('devices_inventory_xid_idx').on(t.inventoryXid, t.id).where(sql`${t.inventoryXid} IS NOT NULL`),
    // The device list's sort orders, each with its tie-break (shared/observability/fleet/fleet.ts listDevices): a page is an
    // index range, forwards or backwards, whatever the fleet's size. After the key, each holds what a status filter
    // tests (the last-seen sort key and whether the device has reported), so the filter is checked on the index
    // entries and only the rows of the page are read from the table: a status is time-relative (no partial index
    // can hold it), and devices that report often are updated since the last vacuum, so walking past rows of the
    // other statuses on the table cost a read of each. The writers of these columns also set last_seen_at, which devices_last_seen_idx indexes,
    // so their updates were never HOT: reports write no more index entries than before.
    index('devices_last_seen_sort_idx').using('btree', lastSeenKey(t.lastSeenAt), t.id, reported(t)),
    index('devices_created_sort_idx').using(
      'btree',
      t.createdAt,
      t.id,
      lastSeenKey(t.lastSeenAt),
      reported(t),
    ),
    index('devices_serial_sort_idx').using(
      'btree',
      t.serialNumber,
      t.id,
      lastSeenKey(t.lastSeenAt),
      reported(t),
    ),
    check('devices_key_type_check', sql`${t.keyType} in ('p256', 'ed25519')`),
  ],
);

/** Every certificate a device has presented; rotated-away ones carry replaced_at and stop working at once. */
export const deviceCertificates = pgTable(
  'device_certificates',
  {
    fingerprint: text('fingerprint').primaryKey(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    certificatePem: text('certificate_pem').notNull(),
    notBefore: ts('not_before').notNull(),
    notAfter: ts('not_after').notNull(),
    createdAt: createdAt(),
    replacedAt: ts('replaced_at'),
  },
  (t) => [index('device_certificates_device_idx').on(t.deviceId)],
);

/** Replay refusal across Lambda instances: one row per accepted signature until its freshness window ends. */
export const deviceSignatures = pgTable(
  'device_signatures',
  {
    signatureHash: text('signature_hash').primaryKey(),
    fingerprint: text('fingerprint').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('device_signatures_expires_idx').on(t.expiresAt)],
);

export const inventoryAgents = pgTable(
  'inventory_agents',
  {
    id: id(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    agentType: text('agent_type').notNull(),
    displayName: text('display_name').notNull().default(''),
    // The client's own version where its config reveals it, and whether the agent captures its tool calls.
    version: text('version'),
    capture: text('capture'),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    removedAt: ts('removed_at'),
    // The row as the fleet counters last counted it (shared/observability/fleet/stats.ts); stats_dirty until they count it
    // again. Every inventory report marks its rows dirty.
    statsPresent: boolean('stats_present').notNull().default(false),
    statsDirty: boolean('stats_dirty').notNull().default(true),
  },
  (t) => [
    uniqueIndex('inventory_agents_device_type_key').on(t.deviceId, t.agentType),
    index('inventory_agents_type_idx').on(t.agentType),
    index('inventory_agents_last_seen_idx').on(t.lastSeenAt),
    index('inventory_agents_stats_dirty_idx').on(t.id).where(sql`${t.statsDirty}`),
    check('inventory_agents_capture_check', sql`${t.capture} in ('hooks', 'none')`),
  ],
);

export const inventoryMcps = pgTable(
  'inventory_mcps',
  {
    id: id(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    agentType: text('agent_type').notNull(),
    name: text('name').notNull(),
    enabled: boolean('enabled').notNull(),
    transport: text('transport').notNull(),
    // Reported by agents that derive them (docs/device-protocol.md, "Inventory"); null from older agents. The same
    // name in two scopes, or with two configs (fingerprints), is two rows: no distinct server is folded into another.
    scope: text('scope'),
    sourceType: text('source_type'),
    sourceName: text('source_name'),
    sourceVersion: text('source_version'),
    fingerprint: text('fingerprint'),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    removedAt: ts('removed_at'),
    // As on inventory_agents: the row as the fleet counters last counted it.
    statsPresent: boolean('stats_present').notNull().default(false),
    statsEnabled: boolean('stats_enabled').notNull().default(false),
    statsTransport: text('stats_transport').notNull().default(''),
    statsDirty: boolean('stats_dirty').notNull().default(true),
  },
  (t) => [
    uniqueIndex('inventory_mcps_device_agent_name_key').on(
      t.deviceId,
      t.agentType,
      t.name,
      sql`coalesce(${t.scope}, '')`,
      sql`coalesce(${t.fingerprint}, '')`,
    ),
    index('inventory_mcps_name_idx').on(t.name),
    // The distinct sources of a name (the fleet MCP list), read by skipping from one to the next on this index.
    index('inventory_mcps_source_idx')
      .on(t.name, t.sourceType, t.sourceName, sql`coalesce(${t.sourceVersion}, '')`)
      .where(sql`${t.removedAt} IS NULL AND ${t.sourceType} IS NOT NULL`),
    index('inventory_mcps_last_seen_idx').on(t.lastSeenAt),
    index('inventory_mcps_stats_dirty_idx').on(t.deviceId).where(sql`${t.statsDirty}`),
    check('inventory_mcps_transport_check', sql`${t.transport} in ('stdio', 'http', 'sse')`),
    check(
      'inventory_mcps_source_type_check',
      sql`${t.sourceType} in ('npm', 'pypi', 'oci', 'executable', 'remote')`,
    ),
  ],
);

/**
 * The tool definitions the agent's MCP proxy saw, as hashes (docs/policy.md, "Tool definition hashes"): one row per
 * device, client, server, tool and definition hash, with when that hash was first and last reported. A definition
 * that changes adds a row, so a changed tool is two hashes for one (device, agent type, server, tool), and one that
 * differs across the fleet is several hashes for one (source identity, version, tool). A table rather than a jsonb
 * column on inventory_mcps: those questions are then indexed lookups, and an inventory row's replacement (a new
 * fingerprint) does not lose the history.
 */
export const inventoryMcpTools = pgTable(
  'inventory_mcp_tools',
  {
    id: id(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    agentType: text('agent_type').notNull(),
    mcpName: text('mcp_name').notNull(),
    toolName: text('tool_name').notNull(),
    definitionHash: text('definition_hash').notNull(),
    // The server's source identity when the hash was last reported (null from a server without one).
    sourceType: text('source_type'),
    sourceName: text('source_name'),
    sourceVersion: text('source_version'),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('inventory_mcp_tools_key').on(
      t.deviceId,
      t.agentType,
      t.mcpName,
      t.toolName,
      t.definitionHash,
    ),
    index('inventory_mcp_tools_server_tool_idx').on(t.mcpName, t.toolName),
    index('inventory_mcp_tools_source_tool_idx').on(
      t.sourceType,
      t.sourceName,
      sql`coalesce(${t.sourceVersion}, '')`,
      t.toolName,
    ),
    check('inventory_mcp_tools_hash_check', sql`${t.definitionHash} ~ '^[0-9a-f]{64}$'`),
  ],
);

/**
 * The fleet counters (shared/observability/fleet/stats.ts): per agent type, the devices that have it now, and when any
 * device first and last reported it. Kept by the fleet-stats fold from the inventory rows it has not counted yet.
 */
export const fleetAgentStats = pgTable('fleet_agent_stats', {
  agentType: text('agent_type').primaryKey(),
  devices: integer('devices').notNull().default(0),
  firstSeenAt: ts('first_seen_at'),
  lastSeenAt: ts('last_seen_at'),
});

/**
 * Per (MCP name, agent type, transport), where '' stands for any: the devices that have a matching MCP now (with one
 * enabled, with one disabled), the matching inventory rows (installs, enabled ones), and when any device first and
 * last reported one. The '' keys answer the views' filters and totals without counting inventory rows.
 */
export const fleetMcpStats = pgTable(
  'fleet_mcp_stats',
  {
    name: text('name').notNull(),
    agentType: text('agent_type').notNull(),
    transport: text('transport').notNull(),
    devices: integer('devices').notNull().default(0),
    enabledDevices: integer('enabled_devices').notNull().default(0),
    disabledDevices: integer('disabled_devices').notNull().default(0),
    installs: integer('installs').notNull().default(0),
    enabledInstalls: integer('enabled_installs').notNull().default(0),
    firstSeenAt: ts('first_seen_at'),
    lastSeenAt: ts('last_seen_at'),
  },
  (t) => [
    primaryKey({ name: 'fleet_mcp_stats_pkey', columns: [t.name, t.agentType, t.transport] }),
    index('fleet_mcp_stats_filter_idx').on(t.agentType, t.transport, t.name),
  ],
);

/**
 * The device counters (shared/observability/fleet/stats.ts), one row: the devices, and those that never reported. With
 * fleet_device_minutes they give the fleet summary's device counts without reading the devices table.
 */
export const fleetDeviceStats = pgTable(
  'fleet_device_stats',
  {
    id: boolean('id').primaryKey().default(true),
    devices: integer('devices').notNull().default(0),
    neverReported: integer('never_reported').notNull().default(0),
  },
  (t) => [check('fleet_device_stats_single_row', sql`${t.id}`)],
);

/**
 * The devices per minute (UTC) of their counted last-seen time ('seen', reported devices only) and of their
 * registration ('created'): the online and new-in-24-h counts are sums over the minutes of a window.
 */
export const fleetDeviceMinutes = pgTable(
  'fleet_device_minutes',
  {
    kind: text('kind').notNull(),
    minute: ts('minute').notNull(),
    devices: integer('devices').notNull().default(0),
  },
  (t) => [
    primaryKey({ name: 'fleet_device_minutes_pkey', columns: [t.kind, t.minute] }),
    check('fleet_device_minutes_kind_check', sql`${t.kind} in ('seen', 'created')`),
  ],
);

/** The fleet-stats fold's lock (one row): folds take it in turn (FOR UPDATE), so two never count one device. */
export const fleetStatsState = pgTable(
  'fleet_stats_state',
  {
    id: boolean('id').primaryKey().default(true),
    foldedAt: ts('folded_at').notNull().defaultNow(),
    rowsFolded: bigint('rows_folded', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('fleet_stats_state_single_row', sql`${t.id}`)],
);

export const inventoryChanges = pgTable(
  'inventory_changes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(),
    agentType: text('agent_type').notNull(),
    mcpName: text('mcp_name'),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [
    index('inventory_changes_at_idx').on(t.at.desc(), t.id.desc()),
    index('inventory_changes_device_idx').on(t.deviceId, t.at.desc()),
    check(
      'inventory_changes_kind_check',
      sql`${t.kind} in ('agent_appeared', 'agent_disappeared', 'mcp_appeared', 'mcp_disappeared')`,
    ),
  ],
);

/** One row per MCP tool call. `id` is the unique tie-break of keyset pagination. */
export const observabilityEvents = pgTable(
  'observability_events',
  {
    // Not a primary key on its own: a key of a partitioned table must hold the partition key (event_time).
    id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    eventId: uuid('event_id'),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    serialNumber: text('serial_number').notNull(),
    sourceIp: text('source_ip'),
    receivedAt: ts('received_at').notNull().defaultNow(),
    eventTime: ts('event_time').notNull(),
    agentType: text('agent_type').notNull(),
    mcpName: text('mcp_name').notNull(),
    tool: text('tool').notNull(),
    eventType: text('event_type').notNull(),
    result: text('result').notNull(),
    denyCode: text('deny_code'),
    denyReason: text('deny_reason'),
    errorMessage: text('error_message'),
    ruleApplied: text('rule_applied'),
    model: text('model'),
    sessionId: text('session_id'),
    group: text('group_name'),
    actorEmail: text('actor_email'),
    tokensIn: integer('tokens_in').notNull().default(0),
    tokensOut: integer('tokens_out').notNull().default(0),
    durationMs: integer('duration_ms').notNull().default(0),
    skills: jsonb('skills').$type<string[]>().notNull().default([]),
    prompt: text('prompt'),
    promptTruncated: boolean('prompt_truncated').notNull().default(false),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    /**
     * The transaction that stored the event: the rollup fold (shared/observability/rollups/rollups.ts) folds events
     * by ranges of it. Written by ingest_events only: NULL for events stored otherwise (a bulk load, which
     * rebuildRollups covers) or before the fold existed (their rollups were written at ingest).
     */
    ingestXid: xid8('ingest_xid'),
  },
  (t) => [
    // Partitioned by day of event_time (migrations/0009_events_partitioned.sql): keys include it. A retried event
    // carries its own event_time again, so it meets its first copy in the same partition (docs/observability.md, Partitions).
    primaryKey({ name: 'observability_events_pkey', columns: [t.id, t.eventTime] }),
    uniqueIndex('observability_events_device_event_key').on(t.deviceId, t.eventId, t.eventTime),
    // (ingest_xid, id): the rollup fold's ranges of transactions, and the exports' keyset order, read in order.
    index('observability_events_ingest_xid_idx').on(t.ingestXid, t.id),
    index('observability_events_time_idx').on(t.eventTime.desc(), t.id.desc()),
    index('observability_events_device_time_idx').on(t.deviceId, t.eventTime.desc(), t.id.desc()),
    index('observability_events_session_idx').on(t.sessionId, t.eventTime, t.id),
    check('observability_events_result_check', sql`${t.result} in ('allowed', 'denied', 'error')`),
    check('observability_events_type_check', sql`${t.eventType} in ('invocation', 'result', 'error')`),
  ],
);

export const REQUEST_STATUSES = ['pending', 'approved', 'active', 'denied', 'revoked', 'expired'] as const;
export const RISK_LEVELS = ['low', 'medium', 'high'] as const;

export const requests = pgTable(
  'requests',
  {
    id: id(),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    businessJustification: text('business_justification').notNull().default(''),
    status: text('status').notNull().default('pending'),
    riskLevel: text('risk_level').notNull().default('low'),
    source: text('source').notNull().default('api'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    validUntil: ts('valid_until'),
    approvedAt: ts('approved_at'),
    approvedBy: text('approved_by'),
    approvalNotes: text('approval_notes'),
    denialReason: text('denial_reason'),
    externalTicketId: text('external_ticket_id'),
    externalTicketUrl: text('external_ticket_url'),
    datasourceNames: jsonb('datasource_names').$type<string[]>().notNull().default([]),
    environmentId: text('environment_id'),
    environmentStatus: text('environment_status'),
    requestTemplate: jsonb('request_template').$type<{ id: string; name: string } | null>(),
    requesterId: text('requester_id').notNull(),
    requesterName: text('requester_name').notNull().default(''),
    requesterEmail: text('requester_email').notNull().default(''),
    scope: jsonb('scope').$type<Record<string, unknown>>().notNull().default({}),
    tunnel: jsonb('tunnel').$type<Record<string, unknown> | null>(),
    idempotencyKey: text('idempotency_key'),
    idempotencyBodySha256: text('idempotency_body_sha256'),
  },
  (t) => [
    index('requests_created_at_idx').on(t.createdAt, t.id),
    index('requests_status_created_idx').on(t.status, t.createdAt),
    index('requests_risk_created_idx').on(t.riskLevel, t.createdAt),
    index('requests_requester_created_idx').on(t.requesterId, t.createdAt),
    index('requests_valid_until_idx').on(t.validUntil).where(sql`${t.status} in ('approved', 'active')`),
    uniqueIndex('requests_idempotency_key').on(t.requesterId, t.idempotencyKey),
    check(
      'requests_status_check',
      sql`${t.status} in ('pending', 'approved', 'active', 'denied', 'revoked', 'expired')`,
    ),
    check('requests_risk_level_check', sql`${t.riskLevel} in ('low', 'medium', 'high')`),
  ],
);

export const requestUsageEvents = pgTable(
  'request_usage_events',
  {
    id: id(),
    requestId: uuid('request_id')
      .notNull()
      .references(() => requests.id, { onDelete: 'cascade' }),
    actionType: text('action_type').notNull(),
    ipAddress: text('ip_address'),
    timestamp: ts('timestamp').notNull().defaultNow(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    // The inserting transaction, as the column's default writes it: the Datastore Activity export's position.
    exportXid: xid8('export_xid').notNull().default(sql`pg_current_xact_id()`),
  },
  (t) => [
    index('request_usage_events_request_idx').on(t.requestId, t.timestamp),
    index('request_usage_events_export_xid_idx').on(t.exportXid, t.id),
  ],
);

export const catalogEntries = pgTable(
  'catalog_entries',
  {
    id: id(),
    datasourceId: text('datasource_id').notNull(),
    datasourceName: text('datasource_name').notNull(),
    targetName: text('target_name').notNull().default(''),
    targetLocation: text('target_location').notNull().default(''),
    summary: text('summary').notNull().default(''),
    scanPolicy: text('scan_policy').notNull().default(''),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    schema: jsonb('schema'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('catalog_entries_datasource_idx').on(t.datasourceName, t.targetName),
    index('catalog_entries_created_at_idx').on(t.createdAt, t.id),
  ],
);

export const AUDIT_SOURCES = ['api', 'env-svc', 'logshipper'] as const;

/**
 * Append-only (a trigger refuses UPDATE and DELETE). The service inserts `hash` = SHA-256 of the record's canonical
 * content; a BEFORE INSERT trigger (migrations/0001) takes the chain lock, assigns `seq`, sets `prev_hash` to the
 * previous record's hash and replaces `hash` with sha256(prev_hash || ':' || content hash). So one INSERT is one
 * chained record, whatever the driver, and chain order is `seq` order.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    id: id(),
    seq: bigint('seq', { mode: 'number' }).notNull().default(0),
    actionType: text('action_type').notNull(),
    actorEmail: text('actor_email').notNull().default(''),
    actorId: text('actor_id').notNull().default(''),
    appName: text('app_name').notNull().default(''),
    containerId: text('container_id').notNull().default(''),
    environmentId: text('environment_id').notNull().default(''),
    environmentName: text('environment_name').notNull().default(''),
    ipAddress: text('ip_address').notNull().default(''),
    level: text('level').notNull().default('info'),
    resourceId: text('resource_id').notNull().default(''),
    resourceType: text('resource_type').notNull().default(''),
    stage: text('stage').notNull().default(''),
    source: text('source').notNull().default('api'),
    timestamp: ts('timestamp').notNull().defaultNow(),
    createdAt: createdAt(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    prevHash: text('prev_hash').notNull().default(''),
    hash: text('hash').notNull().default(''),
  },
  (t) => [
    uniqueIndex('audit_logs_seq_key').on(t.seq),
    index('audit_logs_timestamp_idx').on(t.timestamp, t.id),
    index('audit_logs_created_at_idx').on(t.createdAt, t.id),
    index('audit_logs_action_idx').on(t.actionType, t.createdAt),
    index('audit_logs_actor_idx').on(t.actorEmail, t.createdAt),
    index('audit_logs_resource_idx').on(t.resourceType, t.resourceId, t.createdAt),
    index('audit_logs_source_idx').on(t.source, t.createdAt),
    check('audit_logs_source_check', sql`${t.source} in ('api', 'env-svc', 'logshipper')`),
  ],
);

/**
 * The audit chain's last verified point (one row): the head of an intact walk (a full verify, or the anchor run
 * from its last anchor) and when. The console's banner walks on from it instead of from the first record.
 */
export const auditChainVerified = pgTable(
  'audit_chain_verified',
  {
    id: boolean('id').primaryKey().default(true),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    hash: text('hash').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
    verifiedAt: ts('verified_at').notNull().defaultNow(),
  },
  (t) => [check('audit_chain_verified_single_row', sql`${t.id}`)],
);

/**
 * Browser-brokered CLI sign-ins (RFC 8252 + PKCE), pending until a person approves or refuses them. Codes are stored
 * hashed. Who asked (client_id, the loopback redirect) and from where (the browser's address and user agent at
 * authorize) are shown to the person deciding.
 */
export const cliSignins = pgTable(
  'cli_signins',
  {
    id: id(),
    redirectUri: text('redirect_uri').notNull(),
    state: text('state').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    clientId: text('client_id').notNull(),
    sourceIp: text('source_ip'),
    // The address as the throttle counts it (shared/identity/lockouts.ts sourceKey: an IPv6 address by its /64).
    sourceKey: text('source_key'),
    userAgent: text('user_agent'),
    status: text('status').notNull().default('pending'),
    userSubject: text('user_subject'),
    userEmail: text('user_email'),
    codeHash: text('code_hash'),
    codeExpiresAt: ts('code_expires_at'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('cli_signins_code_hash_key').on(t.codeHash),
    index('cli_signins_expires_idx').on(t.expiresAt),
    // The authorize throttle counts an address's open sign-ins on it.
    index('cli_signins_source_idx').on(t.sourceKey, t.expiresAt),
    check('cli_signins_status_check', sql`${t.status} in ('pending', 'approved', 'refused', 'used')`),
  ],
);

export const healthProbes = pgTable(
  'health_probes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    ranAt: ts('ran_at').notNull().defaultNow(),
    status: text('status').notNull(),
    durationMs: integer('duration_ms').notNull(),
    checks: jsonb('checks').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [
    index('health_probes_ran_at_idx').on(t.ranAt.desc()),
    check('health_probes_status_check', sql`${t.status} in ('ok', 'degraded', 'unavailable')`),
  ],
);

/**
 * Failed sign-ins per key (shared/identity/lockouts.ts). Scopes: `account`, the lower-cased email given at
 * /v1/auth/login, whether or not such a user exists; `source`, the source address there (IPv4, or the /64 of an IPv6
 * address); `cli_source`, the source address at the CLI token exchange. `failures` counts until a whole failure
 * window passes without one (`expires_at` = the last failure plus the window; the probe deletes the row after it).
 * At the threshold the key is locked until `locked_until`, each further failure doubling the lock; `locked_at` is
 * when the current lock started.
 */
export const signinLockouts = pgTable(
  'signin_lockouts',
  {
    id: id(),
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    failures: integer('failures').notNull(),
    firstFailureAt: ts('first_failure_at').notNull(),
    lastFailureAt: ts('last_failure_at').notNull(),
    lockedAt: ts('locked_at'),
    lockedUntil: ts('locked_until'),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('signin_lockouts_scope_key').on(t.scope, t.key),
    index('signin_lockouts_expires_idx').on(t.expiresAt),
    check('signin_lockouts_scope_check', sql`${t.scope} in ('account_source', 'source', 'cli_source')`),
  ],
);

/**
 * Every version of the fleet's MCP policy (docs/policy.md), never changed once written: the newest is in force, and
 * a restore writes an old document again as a new version. Who wrote each one and why is also in the audit chain.
 */
export const policyVersions = pgTable('policy_versions', {
  version: integer('version').primaryKey(),
  document: jsonb('document').$type<Record<string, unknown>>().notNull(),
  // SHA-256 of the document's canonical JSON: the ETag's second half, and how an unchanged save is told apart.
  documentHash: text('document_hash').notNull(),
  reason: text('reason').notNull(),
  createdById: text('created_by_id').notNull(),
  createdByEmail: text('created_by_email').notNull(),
  restoredFrom: integer('restored_from'),
  createdAt: createdAt(),
});

/** The policy version each device last fetched (POST /v1/devices/policy), and when. */
export const policyFetches = pgTable(
  'policy_fetches',
  {
    deviceId: uuid('device_id')
      .primaryKey()
      .references(() => devices.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    fetchedAt: ts('fetched_at').notNull(),
  },
  (t) => [index('policy_fetches_version_idx').on(t.version)],
);

/**
 * Fleet alerts (shared/alerts/alerts.ts, docs/policy.md "Alerts"): one row per (kind, subject), however many devices
 * it covers, so a change rolled out to 500 laptops is one alert.
 */
export const ALERT_KINDS = [
  'new_server',
  'version_changed',
  'source_changed',
  'denied_server',
  'denied_spike',
  'tool_definition_changed',
] as const;
export const ALERT_STATUSES = ['open', 'acknowledged'] as const;

export const alerts = pgTable(
  'alerts',
  {
    id: id(),
    kind: text('kind').notNull(),
    subject: text('subject').notNull(),
    status: text('status').notNull().default('open'),
    details: jsonb('details').notNull().default({}),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    acknowledgedAt: ts('acknowledged_at'),
    acknowledgedBy: text('acknowledged_by'),
    acknowledgeNote: text('acknowledge_note'),
    // The transaction of the alert's last change (its opening: the default; a derivation that found it again with
    // more devices or other details; its acknowledgement): the Detection Finding export's position.
    changeXid: xid8('change_xid').notNull().default(sql`pg_current_xact_id()`),
    // How many changes it has had since it opened (0: as opened): each is exported once, as its own version.
    revision: integer('revision').notNull().default(0),
  },
  (t) => [
    uniqueIndex('alerts_kind_subject_key').on(t.kind, t.subject),
    index('alerts_change_xid_idx').on(t.changeXid, t.id),
    index('alerts_first_seen_idx').on(t.firstSeenAt.desc(), t.id.desc()),
    check('alerts_kind_check', sql.raw(`kind in (${ALERT_KINDS.map((k) => `'${k}'`).join(', ')})`)),
    check('alerts_status_check', sql`${t.status} in ('open', 'acknowledged')`),
  ],
);

/** The devices an alert covers, each with when the derivation first counted it. */
export const alertDevices = pgTable(
  'alert_devices',
  {
    alertId: uuid('alert_id')
      .notNull()
      .references(() => alerts.id, { onDelete: 'cascade' }),
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'alert_devices_pkey', columns: [t.alertId, t.deviceId] }),
    index('alert_devices_device_idx').on(t.deviceId),
  ],
);

/** Every server identity the fleet has reported (new_server is raised for one not here). */
export const alertKnownServers = pgTable('alert_known_servers', {
  identity: text('identity').primaryKey(),
  firstSeenAt: ts('first_seen_at').notNull().defaultNow(),
});

/**
 * Each device's servers as the alert pass last saw them (per agent type, name and scope), so that the next report's
 * version or source is compared with the one before it.
 */
export const alertServerState = pgTable(
  'alert_server_state',
  {
    deviceId: uuid('device_id')
      .notNull()
      .references(() => devices.id, { onDelete: 'cascade' }),
    agentType: text('agent_type').notNull(),
    name: text('name').notNull(),
    scope: text('scope').notNull(),
    sourceType: text('source_type'),
    sourceName: text('source_name'),
    sourceVersion: text('source_version'),
  },
  (t) => [
    primaryKey({ name: 'alert_server_state_pkey', columns: [t.deviceId, t.agentType, t.name, t.scope] }),
  ],
);

/**
 * The alert pass's position (one row): the inventory rows reported after (watermark, watermark_id) are not derived
 * yet; policy_version is the policy they were last checked against.
 */
export const alertPassState = pgTable('alert_pass_state', {
  id: integer('id').primaryKey(),
  watermark: ts('watermark').notNull(),
  watermarkId: uuid('watermark_id').notNull(),
  policyVersion: integer('policy_version').notNull().default(0),
});

/**
 * One webhook delivery of one alert to one configured destination, kept so that a restart resumes its retries:
 * pending (next_attempt_at), delivered, or dead after alerts.delivery.max_attempts failures (the dead-letter list).
 */
export const alertDeliveries = pgTable(
  'alert_deliveries',
  {
    id: id(),
    alertId: uuid('alert_id')
      .notNull()
      .references(() => alerts.id, { onDelete: 'cascade' }),
    destination: text('destination').notNull(),
    event: text('event').notNull(),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastError: text('last_error'),
    createdAt: createdAt(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('alert_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('alert_deliveries_status_idx').on(t.status, t.createdAt.desc(), t.id.desc()),
    check('alert_deliveries_status_check', sql`${t.status} in ('pending', 'delivered', 'dead')`),
  ],
);

/**
 * Export destinations (shared/exports/, docs/exports.md): where the stored events are streamed. `settings` holds what
 * is not secret (URL, encoding, index…); the secret (HEC token, webhook key, OTLP headers) is only named by
 * `secret_ref`, its value lives in Secrets Manager or the local config.
 */
export const EXPORT_DESTINATION_KINDS = ['otlp_http', 'splunk_hec', 'webhook', 'security_lake'] as const;

export const exportDestinations = pgTable(
  'export_destinations',
  {
    id: id(),
    kind: text('kind').notNull(),
    name: text('name').notNull(),
    settings: jsonb('settings').notNull().default({}),
    secretRef: text('secret_ref'),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('export_destinations_name_key').on(t.name),
    check(
      'export_destinations_kind_check',
      sql.raw(`kind in (${EXPORT_DESTINATION_KINDS.map((k) => `'${k}'`).join(', ')})`),
    ),
  ],
);

/**
 * Each destination's position in the events: every event whose (ingest_xid, id) is at or before (cursor_xid,
 * cursor_id) has been delivered. Keyed on the ingest transaction, as the fold is, so that an event committed late
 * is never behind the cursor. Also the delivery's state: attempts since the last success, when to try next, the last
 * error, and counts of events delivered and sent again (after a failed try, or by a replay).
 */
export const exportCursors = pgTable('export_cursors', {
  destinationId: uuid('destination_id')
    .primaryKey()
    .references(() => exportDestinations.id, { onDelete: 'cascade' }),
  cursorXid: xid8('cursor_xid').notNull(),
  cursorId: bigint('cursor_id', { mode: 'number' }).notNull().default(0),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
  lastAttemptAt: ts('last_attempt_at'),
  lastSuccessAt: ts('last_success_at'),
  lastError: text('last_error'),
  lastErrorPermanent: boolean('last_error_permanent').notNull().default(false),
  lastStatus: integer('last_status'),
  delivered: bigint('delivered', { mode: 'number' }).notNull().default(0),
  resent: bigint('resent', { mode: 'number' }).notNull().default(0),
  replayedFrom: ts('replayed_from'),
});

/**
 * Each destination's position in the sources of the other OCSF classes (shared/exports/delivery/classes.ts), one row
 * per destination and class, and its delivery state as on export_cursors. `position` is the class's own keyset
 * position as text: `<xid>:<uuid>` for inventories and usage events, the audit log's `seq` for access changes.
 */
export const exportClassCursors = pgTable(
  'export_class_cursors',
  {
    destinationId: uuid('destination_id')
      .notNull()
      .references(() => exportDestinations.id, { onDelete: 'cascade' }),
    classKey: text('class_key').notNull(),
    position: text('position').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastSuccessAt: ts('last_success_at'),
    lastError: text('last_error'),
    lastErrorPermanent: boolean('last_error_permanent').notNull().default(false),
    lastStatus: integer('last_status'),
    delivered: bigint('delivered', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.destinationId, t.classKey] })],
);
