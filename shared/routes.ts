// The route table: the one source of truth for every HTTP endpoint (rows of larger areas live in
// shared/route-tables/ and are merged here). The local server mounts these rows, the CDK
// stack makes one Lambda per distinct handler and one API Gateway route per row, and the OpenAPI document is
// generated from them. Adding an endpoint = one row here + one file under functions/ + its tests.
import { z } from 'zod';
import type { Config } from './config/schema.ts';
import { defineRoute, type RouteSpec } from './http/route.ts';
import { observabilityRoutes } from './route-tables/observability.ts';
import { requestRoutes } from './route-tables/requests.ts';
import { auditLogListResponse, listAuditLogsQuery } from './schemas/audit.ts';
import { cliApproveBody, cliApproveView, cliAuthorizeQuery, cliTokenBody } from './schemas/cli-signin.ts';
import { envelope } from './schemas/common.ts';
import {
  eventsBody,
  eventsResponse,
  inventoryBody,
  inventoryResponse,
  registerBody,
  registerResponse,
} from './schemas/devices.ts';
import { healthView } from './schemas/health.ts';
import {
  createUserBody,
  listUsersQuery,
  loginBody,
  loginResponse,
  meView,
  tokenView,
  userListResponse,
  userView,
} from './schemas/users.ts';

/** CLI sign-in needs the dashboard's login page: without a dashboard URL its routes are not mounted at all. */
const cliSigninEnabled = (config: Config) => Boolean(config.dashboard_url);

export const routes = {
  healthcheck: defineRoute({
    method: 'GET',
    path: '/v1/healthcheck',
    handler: 'health/healthcheck',
    auth: 'public',
    tags: ['health'],
    summary: 'Service status and system information; 503 when the database is unreachable',
    response: healthView,
    errors: [503],
  }),
  openapi: defineRoute({
    method: 'GET',
    path: '/v1/openapi.json',
    handler: 'meta/openapi',
    auth: 'public',
    tags: ['meta'],
    summary: 'This OpenAPI 3.1 document',
  }),
  login: defineRoute({
    method: 'POST',
    path: '/v1/auth/login',
    handler: 'auth/login',
    auth: 'public',
    kind: 'write',
    tags: ['auth'],
    summary: 'Local sign-in (auth.provider = local): email and password for a bearer token',
    body: loginBody,
    response: loginResponse,
    mountedWhen: (config) => config.auth.provider === 'local',
  }),
  me: defineRoute({
    method: 'GET',
    path: '/v1/me',
    handler: 'auth/me',
    auth: 'user',
    tags: ['auth'],
    summary: 'The signed-in caller',
    response: envelope(meView),
  }),
  createUser: defineRoute({
    method: 'POST',
    path: '/v1/admin/users',
    handler: 'admin/users-create',
    auth: 'admin',
    kind: 'write',
    tags: ['admin'],
    summary: 'Create a user (local auth) with roles',
    body: createUserBody,
    response: envelope(userView),
    successStatus: 201,
    errors: [409],
  }),
  listUsers: defineRoute({
    method: 'GET',
    path: '/v1/admin/users',
    handler: 'admin/users-list',
    auth: 'admin',
    tags: ['admin'],
    summary: 'List users, newest first',
    query: listUsersQuery,
    response: userListResponse,
  }),
  listAuditLogs: defineRoute({
    method: 'GET',
    path: '/v1/admin/audit-logs',
    handler: 'admin/audit-logs-list',
    auth: 'admin',
    tags: ['audit'],
    summary: 'Audit records from every source (api, env-svc, logshipper), filtered and paginated',
    query: listAuditLogsQuery,
    response: auditLogListResponse,
  }),
  registerDevice: defineRoute({
    method: 'POST',
    path: '/v1/devices/register',
    handler: 'devices/register',
    auth: 'device+user',
    kind: 'write',
    tags: ['devices'],
    summary:
      'Register a device: signed body (signature member) plus the user bearer token; the owner is its subject',
    description:
      'New certificate: 201. Same certificate: 200, same deviceId. Known serialNumber + brand with a new certificate: rotated, 200. See device-protocol.md.',
    body: registerBody,
    response: registerResponse,
    successStatus: 201,
    maxBody: { bytes: 64 * 1024, code: 'payload_too_large' },
  }),
  reportInventory: defineRoute({
    method: 'POST',
    path: '/v1/devices/inventory',
    handler: 'devices/inventory',
    auth: 'device',
    kind: 'ingest',
    tags: ['devices'],
    summary:
      'Report the agents installed on the device and the MCP servers of each (replaces the current inventory)',
    body: inventoryBody,
    response: inventoryResponse,
    maxBody: { bytes: 1024 * 1024, code: 'payload_too_large' },
  }),
  reportInventoryAlias: defineRoute({
    method: 'POST',
    path: '/devices/inventory',
    handler: 'devices/inventory',
    auth: 'device',
    kind: 'ingest',
    tags: ['devices'],
    summary: 'Alias of POST /v1/devices/inventory',
    body: inventoryBody,
    response: inventoryResponse,
    maxBody: { bytes: 1024 * 1024, code: 'payload_too_large' },
  }),
  ingestEvents: defineRoute({
    method: 'POST',
    path: '/v1/devices/events',
    handler: 'devices/events',
    auth: 'device',
    kind: 'ingest',
    tags: ['devices'],
    summary: 'A batch of 1..events.max_batch MCP tool-call events (at most 1 MiB), all or nothing',
    body: eventsBody,
    response: eventsResponse,
    errors: [413],
    maxBody: { bytes: 1024 * 1024, code: 'batch_too_large' },
  }),
  cliAuthorize: defineRoute({
    method: 'GET',
    path: '/v1/auth/cli/authorize',
    handler: 'auth/cli-authorize',
    auth: 'public',
    tags: ['auth'],
    summary:
      'Start the browser-brokered agent sign-in (RFC 8252 + PKCE S256): 302 to the dashboard login page',
    query: cliAuthorizeQuery,
    successStatus: 302,
    mountedWhen: cliSigninEnabled,
  }),
  cliApprove: defineRoute({
    method: 'POST',
    path: '/v1/auth/cli/approve',
    handler: 'auth/cli-approve',
    auth: 'user',
    kind: 'write',
    tags: ['auth'],
    summary:
      'The dashboard approves a pending sign-in for the signed-in person; returns where to send the browser',
    body: cliApproveBody,
    response: envelope(cliApproveView),
    errors: [404, 409],
    mountedWhen: cliSigninEnabled,
  }),
  cliToken: defineRoute({
    method: 'POST',
    path: '/v1/auth/cli/token',
    handler: 'auth/cli-token',
    auth: 'public',
    kind: 'write',
    tags: ['auth'],
    summary: 'Exchange the one-time code (60 s) and the PKCE verifier for a device-enrollment token',
    body: cliTokenBody,
    response: tokenView,
    mountedWhen: cliSigninEnabled,
  }),
  ...observabilityRoutes,
  ...requestRoutes,
} satisfies Record<string, RouteSpec>;

export type RouteId = keyof typeof routes;
export const routeList: ReadonlyArray<[RouteId, RouteSpec]> = Object.entries(routes) as Array<
  [RouteId, RouteSpec]
>;

/** Functions run on a schedule (EventBridge in AWS, timers in the local server). */
export const schedules = {
  healthProbe: {
    handler: 'health/probe',
    summary: 'Background health probe; also prunes expired replay records and sign-ins',
    everyMs: (config: Config) => config.health.probe_interval,
  },
  requestExpiry: {
    handler: 'requests/expire',
    summary: 'Data-access requests past valid_until become expired; their environments are torn down',
    everyMs: (config: Config) => config.requests.expiry_interval,
  },
} as const;
export type ScheduleId = keyof typeof schedules;

export const scheduleInput = z.object({}).passthrough();
