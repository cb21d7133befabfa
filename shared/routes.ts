// The route table: the one source of truth for every HTTP endpoint. The local server mounts these rows, the CDK
// stack makes one Lambda per distinct handler and one API Gateway route per row, and the OpenAPI document is
// generated from them. Adding an endpoint = one row here + one file under functions/ + its tests.
import { z } from 'zod';
import { defineRoute, type RouteSpec } from './http/route.ts';
import { auditLogListResponse, listAuditLogsQuery } from './schemas/audit.ts';
import { envelope } from './schemas/common.ts';
import { healthView } from './schemas/health.ts';
import {
  createUserBody,
  listUsersQuery,
  loginBody,
  loginResponse,
  meView,
  userListResponse,
  userView,
} from './schemas/users.ts';

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
    everyMs: (config: { health: { probe_interval: number } }) => config.health.probe_interval,
  },
} as const;
export type ScheduleId = keyof typeof schedules;

export const scheduleInput = z.object({}).passthrough();
