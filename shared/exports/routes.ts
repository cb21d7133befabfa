// Rows of the route table for export destinations (docs/exports.md, "Destinations"): list, create, change, delete,
// status with lag, and replay. Merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import {
  createDestinationBody,
  deletedResponse,
  destinationIdParams,
  destinationListResponse,
  destinationResponse,
  destinationStatusResponse,
  replayBody,
  replayResponse,
  updateDestinationBody,
} from './schemas.ts';

const common = { handler: 'exports/admin', auth: 'admin', tags: ['exports'] } as const;

export const listExportDestinations = defineRoute({
  ...common,
  method: 'GET',
  path: '/v1/admin/exports/destinations',
  summary: 'Export destinations, by name (their secrets are only named, never shown)',
  response: destinationListResponse,
});

export const createExportDestination = defineRoute({
  ...common,
  method: 'POST',
  path: '/v1/admin/exports/destinations',
  kind: 'write',
  summary:
    'Add a destination (OTLP/HTTP, Splunk HEC, webhook or Amazon Security Lake); audited export.destination_created',
  description:
    'The settings are checked against the kind (docs/exports.md); the secret is named by secret_ref, never given. A name in use is 409 destination_exists.',
  body: createDestinationBody,
  response: destinationResponse,
  errors: [409],
});

export const getExportDestinationStatus = defineRoute({
  ...common,
  method: 'GET',
  path: '/v1/admin/exports/destinations/{id}',
  summary: 'One destination and its delivery: lag in events and seconds, counts, the last error',
  params: destinationIdParams,
  response: destinationStatusResponse,
  errors: [404],
});

export const updateExportDestination = defineRoute({
  ...common,
  method: 'PATCH',
  path: '/v1/admin/exports/destinations/{id}',
  kind: 'write',
  summary: 'Change a destination; its next try is at the next pass. Audited export.destination_updated',
  params: destinationIdParams,
  body: updateDestinationBody,
  response: destinationResponse,
  errors: [404, 409],
});

export const deleteExportDestination = defineRoute({
  ...common,
  method: 'DELETE',
  path: '/v1/admin/exports/destinations/{id}',
  kind: 'write',
  summary: 'Remove a destination and its cursor. Audited export.destination_deleted',
  params: destinationIdParams,
  response: deletedResponse,
  errors: [404],
});

export const replayExportDestination = defineRoute({
  ...common,
  method: 'POST',
  path: '/v1/admin/exports/destinations/{id}/replay',
  kind: 'write',
  summary: 'Send again every stored event from a time on (event_time); audited export.destination_replayed',
  description:
    "The tool calls' cursor moves back to just before the first event from `from` on (`replayed` counts the events " +
    "sent again). A security_lake destination's class streams (`status.classes`) move back too, each to just before " +
    'the first record of its source changed at or after `from` (docs/exports.md, "Replay"). Cursors only move back.',
  params: destinationIdParams,
  body: replayBody,
  response: replayResponse,
  errors: [404],
});

export const exportRoutes = {
  listExportDestinations,
  createExportDestination,
  getExportDestinationStatus,
  updateExportDestination,
  deleteExportDestination,
  replayExportDestination,
} satisfies Record<string, RouteSpec>;
