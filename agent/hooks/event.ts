// An observed call as the service's event (docs/device-protocol.md, "Event fields"). Tool input and output are kept
// only when the device's settings opt in, and then cut to capture.maxChars; strings are cut to the service's limits.
import type { ToolCallEvent } from '../client.ts';
import { randomUUID } from './random.ts';
import type { CaptureSettings } from './settings.ts';
import type { Decision } from './types.ts';

/** Cuts a string to `max` characters, marking the cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  // Never half of a surrogate pair.
  if (cut > 0 && /[\uD800-\uDBFF]/.test(text[cut - 1] as string)) cut--;
  return `${text.slice(0, cut)}…`;
}

const ERROR_MESSAGE_CHARS = 500;
/** deny_code of an allowed call that an audit-mode rule would have denied. */
export const WOULD_DENY = 'policy_would_deny';

function captured(value: unknown, maxChars: number): string | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? undefined : truncate(text, maxChars);
}

export interface CallFacts {
  agentType: string;
  server: string;
  tool: string;
  eventTime: number;
  /** `invocation`: the call started and no end was ever reported. */
  outcome: 'result' | 'error' | 'invocation';
  error?: string;
  durationMs?: number;
  sessionId?: string;
  model?: string;
  actorEmail?: string;
  group?: string;
  input?: unknown;
  output?: unknown;
  decision: Decision;
  metadata: Record<string, unknown>;
}

export function toolCallEvent(facts: CallFacts, capture: CaptureSettings): ToolCallEvent {
  const event: ToolCallEvent = {
    event_id: randomUUID(),
    event_time: new Date(facts.eventTime).toISOString(),
    agent_type: truncate(facts.agentType, 100),
    mcp_name: truncate(facts.server, 200),
    tool: truncate(facts.tool, 200),
    event_type: facts.outcome,
    result: facts.outcome === 'error' ? 'error' : 'allowed',
  };
  const metadata: Record<string, unknown> = { ...facts.metadata };
  const { decision } = facts;
  if (decision.kind === 'deny') {
    event.result = 'denied';
    event.deny_code = truncate(decision.code, 200);
    event.deny_reason = truncate(decision.reason, 2000);
    event.rule_applied = truncate(decision.rule, 500);
  } else if (decision.audit) {
    // An audit-mode match: the call went through (allowed), and the deny it would have been is reported with it.
    event.deny_code = WOULD_DENY;
    event.deny_reason = truncate(decision.audit.reason, 2000);
    event.rule_applied = truncate(decision.audit.rule, 500);
    if (decision.rule) metadata.policy_rule = decision.rule;
  } else if (decision.rule) {
    event.rule_applied = truncate(decision.rule, 500);
  }
  if (decision.kind === 'allow' && decision.noCache) metadata.policy = 'no_cache_open';
  if (facts.outcome === 'error')
    event.error_message = truncate(facts.error ?? 'the tool failed', ERROR_MESSAGE_CHARS);
  if (facts.durationMs !== undefined) event.duration_ms = Math.min(Math.round(facts.durationMs), 86_400_000);
  if (facts.sessionId) event.session_id = truncate(facts.sessionId, 200);
  if (facts.model) event.model = truncate(facts.model, 200);
  if (facts.actorEmail) event.actor_email = truncate(facts.actorEmail, 320);
  if (facts.group) event.group = truncate(facts.group, 200);
  const input = capture.toolInput ? captured(facts.input, capture.maxChars) : undefined;
  const output = capture.toolOutput ? captured(facts.output, capture.maxChars) : undefined;
  if (input !== undefined) metadata.tool_input = input;
  if (output !== undefined) metadata.tool_output = output;
  event.metadata = metadata;
  return event;
}
