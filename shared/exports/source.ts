// What an export maps: one stored tool-call event as the service returns it, and the facts around it that the event
// row does not hold (the server's transport from the inventory, the device, ids the caller may know).
import type * as z from 'zod';
import type { eventDetail } from '../observability/schemas.ts';

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
export function timesOf(event: StoredEvent): { startMs: number; endMs: number } {
  const startMs = Date.parse(event.event_time);
  return { startMs, endMs: startMs + event.duration_ms };
}
