// The hook's decision point: the fleet's MCP policy, from the copy the daemon keeps (policy.ts), never the network.
// Each client's answer() turns the decision into its documented format (a deny in Claude Code's
// hookSpecificOutput.permissionDecision, Cursor's permission, Gemini CLI's decision, Windsurf's exit code 2).
import { type DecideContext, policyDecision } from './policy.ts';
import type { Decision, ObservedCall } from './types.ts';

export const ALLOW: Decision = { kind: 'allow' };

export function decide(call: ObservedCall, context: DecideContext): Decision {
  return policyDecision(call, context);
}
