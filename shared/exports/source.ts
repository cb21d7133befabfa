// What an export maps: one stored tool-call event as the service returns it, and the facts around it that the event
// row does not hold (the server's transport from the inventory, the device, ids the caller may know); and, for the
// other OCSF classes, a device's inventory, a request's grant or end, a proxied query and an alert, each as the API
// returns it.
import type * as z from 'zod';
import type { alertView } from '../alerts/schemas.ts';
import type { auditLogView } from '../audit/schemas.ts';
import type { deviceDetailResponse, eventDetail } from '../observability/schemas.ts';
import type { RequestView, usageEventView } from '../requests/schemas.ts';

/** A stored event, every field as GET …/observability/events/{id} returns it. */
export type StoredEvent = z.output<typeof eventDetail>;

export type McpTransport = 'stdio' | 'http' | 'sse';

export interface ExportSource {
  event: StoredEvent;
  /** The MCP server's transport on the device, from its inventory; absent when the inventory does not know it. */
  transport?: McpTransport | undefined;
  /** The device, from the devices table. */
  device?: { brand: string; model: string } | undefined;
  /** The JSON-RPC request id or the agent's tool-call id, when known. */
  tool_call_id?: string | undefined;
  /** The error's code (a JSON-RPC error code or the tool's own), when known; otherwise an error is `tool_error`. */
  error_code?: string | undefined;
  /** `event.event_time` in epoch milliseconds, when the reader has it as a number (saves parsing the text). */
  event_ms?: number | undefined;
}

/** Our product, as both shapes name the producer. */
export const PRODUCT = { name: 'Agent Control Plane', vendor_name: 'agent-control-plane' } as const;

/** The error type of a call that failed or was blocked, or undefined when it went through. */
export function errorTypeOf(source: ExportSource): string | undefined {
  const { event } = source;
  if (event.result === 'error') return source.error_code ?? 'tool_error';
  if (event.result === 'denied') return event.deny_code ?? 'denied';
  return undefined;
}

/** `rule_applied` is `<rule id>@<policy version>`; either part may be missing in what older agents sent. */
export function ruleOf(ruleApplied: string): { id: string; version?: string } {
  const at = ruleApplied.lastIndexOf('@');
  if (at <= 0) return { id: ruleApplied };
  return { id: ruleApplied.slice(0, at), version: ruleApplied.slice(at + 1) };
}

/** The call's span in epoch milliseconds: the event time is when it occurred (began), and it lasted `duration_ms`. */
export function timesOf(source: ExportSource): { startMs: number; endMs: number } {
  const { event } = source;
  const startMs = source.event_ms ?? Date.parse(event.event_time);
  return { startMs, endMs: startMs + event.duration_ms };
}

/** A device and what its inventory holds, as GET /v1/admin/devices/{id} returns them (its `data`). */
export type DeviceInventorySource = Pick<
  z.output<typeof deviceDetailResponse>['data'],
  'device' | 'agents' | 'mcps' | 'as_of'
>;

/** One audit record of a request's move, with the request as GET /v1/requests/{id} returns it. */
export interface AccessChangeSource {
  audit: z.output<typeof auditLogView>;
  request: Pick<RequestView, 'id' | 'requester' | 'scope' | 'datasource_names' | 'valid_until'>;
}

/** One usage event of a request (POST /v1/requests/{id}/query), with the request it ran under. */
export interface DatastoreQuerySource {
  usage: z.output<typeof usageEventView>;
  request: Pick<RequestView, 'id' | 'environment_id' | 'datasource_names'>;
}

/** An alert as GET /v1/admin/alerts/{id} returns it (its devices are not needed). */
export type AlertSource = z.output<typeof alertView>;
