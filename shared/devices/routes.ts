// Rows of the route table for devices (signed register, release, inventory, events); merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute, withUnversionedAliases } from '../core/http/route.ts';
import { envelope, uuidParam } from '../core/schemas/common.ts';
import {
  deviceReleaseView,
  eventsBody,
  eventsResponse,
  inventoryBody,
  inventoryResponse,
  registerBody,
  registerResponse,
} from './schemas.ts';

// Registration opens enrollment only when CLI sign-in is on; its handler reads that from this table.
export { cliSigninEnabled } from '../identity/cli-sign-in-enabled.ts';

export const registerDevice = defineRoute({
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

export const releaseDevice = defineRoute({
  method: 'POST',
  path: '/v1/admin/devices/{id}/release',
  handler: 'devices/release',
  auth: 'admin',
  kind: 'write',
  tags: ['devices'],
  summary: 'Release a device from its owner, so that another user can enroll it (audited)',
  description: releaseDescription,
  params: uuidParam,
  response: envelope(deviceReleaseView),
});

export const reportInventory = defineRoute({
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

export const ingestEvents = defineRoute({
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

export const deviceRoutes = {
  registerDevice,
  ...withUnversionedAliases({ releaseDevice, reportInventory }),
  ingestEvents,
} satisfies Record<string, RouteSpec>;
