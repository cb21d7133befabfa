// The PreToolUse / PostToolUse hook protocol that Claude Code defined and Codex follows: `mcp__<server>__<tool>`
// tool names, a tool_use_id pairing the two events, and a deny as hookSpecificOutput.permissionDecision. Silence
// (exit 0, no output) is "no decision": an explicit "allow" would skip the user's own permission prompt.
import { digest, mcpResultError, num, str } from '../payload.ts';
import { DOUBLE_UNDERSCORE, normalizeServerName, splitToolName } from '../tool-name.ts';
import type { Decision, HookAnswer, ObservedCall, Payload, ReadContext } from '../types.ts';

/** Server and tool of a tool name, preferring the server the payload names (the name may contain `__`). */
export function mcpServerAndTool(
  toolName: string,
  named: string | undefined,
  context: ReadContext,
): { server: string; tool: string } | undefined {
  if (named) {
    const head = `mcp__${normalizeServerName(named)}__`;
    if (toolName.startsWith(head) && toolName.length > head.length)
      return { server: named, tool: toolName.slice(head.length) };
  }
  const split = splitToolName(toolName, DOUBLE_UNDERSCORE, context.knownServers());
  return split && named ? { server: named, tool: split.tool } : split;
}

/** The call in a PreToolUse / PostToolUse / PostToolUseFailure payload, or undefined if it is not an MCP tool's. */
export function readToolUse(
  payload: Payload,
  event: string,
  phase: 'pre' | 'post',
  context: ReadContext,
  server?: string,
): ObservedCall | undefined {
  const toolName = str(payload.tool_name);
  const names = toolName && mcpServerAndTool(toolName, server, context);
  if (!toolName || !names) return undefined;
  const sessionId = str(payload.session_id);
  const call: ObservedCall = {
    phase,
    ...names,
    pairKey: `${sessionId ?? ''}\0${str(payload.tool_use_id) ?? `${toolName}\0${digest(payload.tool_input)}`}`,
    clientEvent: event,
    input: payload.tool_input,
  };
  if (sessionId) call.sessionId = sessionId;
  const model = str(payload.model);
  if (model) call.model = model;
  // Inside a subagent, the payload's `agent_type` is the subagent's.
  const subagent = str(payload.agent_type);
  if (subagent) call.extra = { subagent };
  if (phase === 'post') {
    call.output = payload.tool_response;
    const duration = num(payload.duration_ms);
    if (duration !== undefined) call.durationMs = duration;
    const error =
      event === 'PostToolUseFailure'
        ? (str(payload.error) ?? 'the tool failed')
        : mcpResultError(payload.tool_response);
    if (error !== undefined) call.error = error;
  }
  return call;
}

export function answerToolUse(decision: Decision, pre: boolean): HookAnswer {
  if (decision.kind === 'allow' || !pre) return { stdout: '', exitCode: 0 };
  return {
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: decision.reason,
      },
    }),
    exitCode: 0,
  };
}
