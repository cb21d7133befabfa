// The hook's decision point. Every call is allowed today; policy enforcement (a later issue) decides here, and
// each client's answer() turns the decision into its documented format (a deny in Claude Code's
// hookSpecificOutput.permissionDecision, Cursor's permission, Gemini CLI's decision, Windsurf's exit code 2).
import type { Decision, ObservedCall } from './types.ts';

export const ALLOW: Decision = { kind: 'allow' };

export function decide(_call: ObservedCall): Decision {
  return ALLOW;
}
