// Rows of the route table for identity: local sign-in, the caller, users, sign-in lockouts and the
// browser-brokered CLI sign-in; merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { envelope, uuidParam } from '../core/schemas/common.ts';
import { cliSigninEnabled } from './cli-sign-in-enabled.ts';
import {
  cliAuthorizeQuery,
  cliDecisionBody,
  cliDecisionView,
  cliSigninResponse,
  cliTokenBody,
} from './cli-sign-in-schemas.ts';
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
  tokenView,
  userListResponse,
  userView,
} from './schemas.ts';

export const login = defineRoute({
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

export const me = defineRoute({
  method: 'GET',
  path: '/v1/me',
  handler: 'identity/me',
  auth: 'user',
  tags: ['auth'],
  summary: 'The signed-in caller',
  response: envelope(meView),
});

export const createUser = defineRoute({
  method: 'POST',
  path: '/v1/admin/users',
  handler: 'identity/users-create',
  auth: 'admin',
  kind: 'write',
  tags: ['admin'],
  summary: 'Create a user (local auth) with roles',
  body: createUserBody,
  response: envelope(userView),
  successStatuses: [201],
  errors: [409],
});

export const listUsers = defineRoute({
  method: 'GET',
  path: '/v1/admin/users',
  handler: 'identity/users-list',
  auth: 'admin',
  tags: ['admin'],
  summary: 'List users, newest first',
  query: listUsersQuery,
  response: userListResponse,
});

export const listSigninLockouts = defineRoute({
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

export const clearSigninLockout = defineRoute({
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

export { cliSigninEnabled };

export const cliAuthorize = defineRoute({
  method: 'GET',
  path: '/v1/auth/cli/authorize',
  handler: 'identity/cli-authorize',
  auth: 'public',
  tags: ['auth'],
  summary: 'Start the browser-brokered agent sign-in (RFC 8252 + PKCE S256): 302 to the dashboard login page',
  description:
    'Records who asks (client_id, the loopback redirect_uri) and the address and User-Agent of the browser that opens this URL, for the person who approves or refuses the sign-in (GET /v1/auth/cli/requests/{id}). Anyone may start one, so one source address (an IPv6 address by its /64) may have at most auth.cli_authorize_max_per_source sign-ins open (each lives 10 minutes); past it the answer is 429 too_many_requests with Retry-After (until its oldest one ends), and nothing is stored.',
  query: cliAuthorizeQuery,
  successStatuses: [302],
  // 429 too_many_requests (with Retry-After): the source address has auth.cli_authorize_max_per_source sign-ins open.
  errors: [429],
  mountedWhen: cliSigninEnabled,
});

export const getCliRequest = defineRoute({
  method: 'GET',
  path: '/v1/auth/cli/requests/{id}',
  handler: 'identity/cli-request',
  auth: 'user',
  tags: ['auth'],
  summary:
    'A sign-in as the person deciding on it reads it: the client, its loopback address, when it was asked, its status',
  description:
    'The id is the `request` of the dashboard login URL. 404 not_found once it is unknown or past its 10 minutes.',
  params: uuidParam,
  response: cliSigninResponse,
  mountedWhen: cliSigninEnabled,
});

export const cliApprove = defineRoute({
  method: 'POST',
  path: '/v1/auth/cli/approve',
  handler: 'identity/cli-approve',
  auth: 'user',
  kind: 'write',
  tags: ['auth'],
  summary:
    'The dashboard approves a pending sign-in for the signed-in person; returns where to send the browser',
  description:
    'redirect_to is the loopback redirect with code and state. 404 not_found: unknown or past its 10 minutes; 409 signin_already_approved or signin_already_refused: it was decided already.',
  body: cliDecisionBody,
  response: envelope(cliDecisionView),
  errors: [404, 409],
  mountedWhen: cliSigninEnabled,
});

export const cliRefuse = defineRoute({
  method: 'POST',
  path: '/v1/auth/cli/refuse',
  handler: 'identity/cli-refuse',
  auth: 'user',
  kind: 'write',
  tags: ['auth'],
  summary:
    'The signed-in person refuses a pending sign-in; returns the loopback redirect with error=access_denied',
  description:
    'redirect_to is the loopback redirect with error=access_denied and state (RFC 6749 section 4.1.2.1), so the agent stops waiting. 404 not_found: unknown or past its 10 minutes; 409 signin_already_approved or signin_already_refused: it was decided already.',
  body: cliDecisionBody,
  response: envelope(cliDecisionView),
  errors: [404, 409],
  mountedWhen: cliSigninEnabled,
});

export const cliToken = defineRoute({
  method: 'POST',
  path: '/v1/auth/cli/token',
  handler: 'identity/cli-token',
  auth: 'public',
  kind: 'write',
  tags: ['auth'],
  summary: 'Exchange the one-time code (60 s) and the PKCE verifier for a device-enrollment token',
  description:
    'Failed exchanges (400 invalid_grant) are counted per source address: past auth.signin_max_failures_per_source within auth.signin_failure_window the address is locked for auth.signin_lockout, doubling with each further failure, and every exchange from it is 429 too_many_attempts with Retry-After.',
  body: cliTokenBody,
  response: tokenView,
  // 429 too_many_attempts (with Retry-After) while the source address is locked after failed exchanges.
  errors: [429],
  mountedWhen: cliSigninEnabled,
});

export const identityRoutes = {
  login,
  me,
  createUser,
  listUsers,
  listSigninLockouts,
  clearSigninLockout,
  cliAuthorize,
  getCliRequest,
  cliApprove,
  cliRefuse,
  cliToken,
} satisfies Record<string, RouteSpec>;
