// Rows of the route table for the foundation endpoints (health, OpenAPI, local sign-in, users); merged into
// shared/routes.ts. An area table of its own, so that a function's bundle builds only its area's schemas
// (infra/route-tables.ts).
// Each row is exported on its own, marked pure, and the table lists them: a function's bundle takes its own rows
// and leaves the others out (infra/route-tables.ts). So a row holds nothing esbuild would keep for its side effects
// (body limits are numbers, not products; `envelope(...)` is marked pure too).
import * as z from 'zod';
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { envelope, errorBody, openApiDocument, uuidParam } from '../core/schemas/common.ts';
import { healthView } from '../health/schemas.ts';
import {
  listSigninLockoutsQuery,
  signinLockoutListResponse,
  signinLockoutResponse,
} from './lockout-schemas.ts';
import {
  createUserBody,
  listUsersQuery,
  loginBody,
  loginResponse,
  meView,
  userListResponse,
  userView,
} from './schemas.ts';

export const healthcheck = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/healthcheck',
  handler: 'health/healthcheck',
  auth: 'public',
  tags: ['health'],
  summary: 'Service status and system information; 503 when the database is unreachable',
  response: healthView,
  // Unavailable: the health report itself (status "unavailable"), or {error, message} when the service cannot
  // even build it.
  errorBodies: { 503: /* @__PURE__ */ z.union([healthView, errorBody]) },
});

export const openapi = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/openapi.json',
  handler: 'meta/openapi',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary: 'This OpenAPI 3.1 document',
  response: openApiDocument,
});

export const apiReference = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/docs',
  handler: 'meta/api-reference',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary:
    'The API reference: this document rendered for people (Redoc), with a strict Content-Security-Policy',
  responseType: 'text/html',
});

export const apiReferenceScript = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/docs/redoc.standalone.js',
  handler: 'meta/api-reference',
  auth: 'public',
  database: false,
  tags: ['meta'],
  summary: 'The script of the API reference page (Redoc)',
  responseType: 'text/javascript',
});

export const login = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/auth/login',
  handler: 'identity/login',
  auth: 'public',
  kind: 'write',
  tags: ['auth'],
  summary: 'Local sign-in (auth.provider = local): email and password for a bearer token',
  description:
    'Failed sign-ins are counted per account (the email given, whether or not the user exists) and per source address. Past auth.signin_max_failures (per address: auth.signin_max_failures_per_source) within auth.signin_failure_window, the key is locked for auth.signin_lockout, doubling with each further failure: every attempt is then 429 too_many_attempts with Retry-After, checked before the password, so the right password is refused too. A success clears the account’s failures.',
  body: loginBody,
  response: loginResponse,
  // 429 too_many_attempts (with Retry-After) while the account or the source address is locked.
  errors: [401, 429],
  mountedWhen: (config) => config.auth.provider === 'local',
});

export const me = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/me',
  handler: 'identity/me',
  auth: 'user',
  tags: ['auth'],
  summary: 'The signed-in caller',
  response: /* @__PURE__ */ envelope(meView),
});

export const createUser = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/admin/users',
  handler: 'identity/users-create',
  auth: 'admin',
  kind: 'write',
  tags: ['admin'],
  summary: 'Create a user (local auth) with roles',
  body: createUserBody,
  response: /* @__PURE__ */ envelope(userView),
  successStatuses: [201],
  errors: [409],
});

export const listUsers = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/admin/users',
  handler: 'identity/users-list',
  auth: 'admin',
  tags: ['admin'],
  summary: 'List users, newest first',
  query: listUsersQuery,
  response: userListResponse,
});

export const listSigninLockouts = /* @__PURE__ */ defineRoute({
  method: 'GET',
  path: '/v1/admin/signin-lockouts',
  handler: 'identity/lockouts-list',
  auth: 'admin',
  tags: ['auth'],
  summary:
    'Sign-in lockouts: the accounts and addresses with failed sign-ins in their window, locked ones first',
  query: listSigninLockoutsQuery,
  response: signinLockoutListResponse,
});

export const clearSigninLockout = /* @__PURE__ */ defineRoute({
  method: 'DELETE',
  path: '/v1/admin/signin-lockouts/{id}',
  handler: 'identity/lockouts-clear',
  auth: 'admin',
  kind: 'write',
  tags: ['auth'],
  summary:
    'Clear a sign-in lockout: forget its failures and lift its lock (audited); answers the record as it was',
  params: uuidParam,
  response: signinLockoutResponse,
});

export const foundationRoutes = {
  healthcheck,
  openapi,
  apiReference,
  apiReferenceScript,
  login,
  me,
  createUser,
  listUsers,
  listSigninLockouts,
  clearSigninLockout,
} satisfies Record<string, RouteSpec>;
