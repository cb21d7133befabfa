// Rows of the route table for devices (signed register, inventory, events) and the browser-brokered CLI sign-in;
// merged into shared/routes.ts. An area table of its own, so that a function's bundle builds only its area's
// schemas (infra/route-tables.ts).
// Each row is exported on its own, marked pure, and the table lists them: a function's bundle takes its own rows
// and leaves the others out (infra/route-tables.ts). So a row holds nothing esbuild would keep for its side effects
// (body limits are numbers, not products; `envelope(...)` is marked pure too).
import type { Config } from '../core/config/schema.ts';
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { envelope, uuidParam } from '../core/schemas/common.ts';
import {
  cliAuthorizeQuery,
  cliDecisionBody,
  cliDecisionView,
  cliSigninResponse,
  cliTokenBody,
} from '../identity/cli-sign-in-schemas.ts';
import { tokenView } from '../identity/schemas.ts';
import {
  deviceReleaseView,
  eventsBody,
  eventsResponse,
  inventoryBody,
  inventoryResponse,
  registerBody,
  registerResponse,
} from './schemas.ts';

/** CLI sign-in needs the dashboard's login page: without a dashboard URL its routes are not mounted at all. */
export const cliSigninEnabled = (config: Config) => Boolean(config.dashboard_url);

export const registerDevice = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/devices/register',
  handler: 'devices/register',
  auth: 'device+user',
  kind: 'write',
  tags: ['devices'],
  summary:
    'Register a device: signed body (signature member) plus the user bearer token; the owner is its subject',
  description:
    'New certificate: 201. Same certificate: 200, same deviceId. Known serialNumber + brand with a new certificate: the key is rotated, 200 (audited device.key_rotated). A device stays with its owner: either by another user is 409 device_owned_by_another_user and stores nothing, unless an admin released the device (POST /v1/admin/devices/{id}/release; the caller then becomes the owner, audited device.re_enrolled). Without a dashboard URL (CLI sign-in disabled) a new device or a rotation is 403 enrollment_disabled. See device-protocol.md.',
  body: registerBody,
  response: registerResponse,
  // 201 for a new device; 200 for an enrolled certificate registering again and for a rotation.
  successStatuses: [201, 200],
  // 403 enrollment_disabled: without a dashboard URL no new device or rotation is accepted. 409
  // device_owned_by_another_user: the device is another user's and was not released.
  errors: [403, 409],
  maxBody: { bytes: 65_536 /* 64 KiB */, code: 'payload_too_large' },
});

const releaseDescription =
  'A registered device stays with the user who enrolled it: registering it as another user is 409 device_owned_by_another_user. Released, its next registration by any signed-in user makes that user the owner (audited device.re_enrolled, with the old and the new owner). Until then the owner and the certificate stay as they are. Audited device.released; releasing a released device again answers it as it is.';

export const releaseDevice = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/admin/devices/{id}/release',
  handler: 'devices/release',
  auth: 'admin',
  kind: 'write',
  tags: ['devices'],
  summary: 'Release a device from its owner, so that another user can enroll it (audited)',
  description: releaseDescription,
  params: uuidParam,
  response: /* @__PURE__ */ envelope(deviceReleaseView),
});

export const releaseDeviceAlias = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/admin/devices/{id}/release',
  handler: 'devices/release',
  auth: 'admin',
  kind: 'write',
  tags: ['devices'],
  summary: 'Alias of POST /v1/admin/devices/{id}/release',
  description: releaseDescription,
  params: uuidParam,
  response: /* @__PURE__ */ envelope(deviceReleaseView),
});

export const reportInventory = /* @__PURE__ */ defineRoute({
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
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'payload_too_large' },
});

export const reportInventoryAlias = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/devices/inventory',
  handler: 'devices/inventory',
  auth: 'device',
  kind: 'ingest',
  tags: ['devices'],
  summary: 'Alias of POST /v1/devices/inventory',
  body: inventoryBody,
  response: inventoryResponse,
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'payload_too_large' },
});

export const ingestEvents = /* @__PURE__ */ defineRoute({
  method: 'POST',
  path: '/v1/devices/events',
  handler: 'devices/events',
  auth: 'device',
  kind: 'ingest',
  tags: ['devices'],
  summary: 'A batch of 1..events.max_batch MCP tool-call events (at most 1 MiB), all or nothing',
  description:
    'Errors besides the device checks: 400 validation_failed (an invalid event, named by its field), 400 event_too_old (an event older than the retention window: the message names body.events[i].event_time of the first such event and says where the window starts, `which starts at <instant>`; drop every event before it and send the rest, never retry them), 413 batch_too_large (more than events.max_batch events, or over 1 MiB). See docs/device-protocol.md, Times and Errors.',
  body: eventsBody,
  response: eventsResponse,
  errors: [413],
  maxBody: { bytes: 1_048_576 /* 1 MiB */, code: 'batch_too_large' },
});

export const cliAuthorize = /* @__PURE__ */ defineRoute({
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

export const getCliRequest = /* @__PURE__ */ defineRoute({
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

export const cliApprove = /* @__PURE__ */ defineRoute({
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
  response: /* @__PURE__ */ envelope(cliDecisionView),
  errors: [404, 409],
  mountedWhen: cliSigninEnabled,
});

export const cliRefuse = /* @__PURE__ */ defineRoute({
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
  response: /* @__PURE__ */ envelope(cliDecisionView),
  errors: [404, 409],
  mountedWhen: cliSigninEnabled,
});

export const cliToken = /* @__PURE__ */ defineRoute({
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

export const deviceRoutes = {
  registerDevice,
  releaseDevice,
  releaseDeviceAlias,
  reportInventory,
  reportInventoryAlias,
  ingestEvents,
  cliAuthorize,
  getCliRequest,
  cliApprove,
  cliRefuse,
  cliToken,
} satisfies Record<string, RouteSpec>;
