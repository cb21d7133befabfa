// Gemini CLI's hooks (https://geminicli.com/docs/hooks/reference): BeforeTool / AfterTool in settings.json,
// matched on MCP tools (`mcp_<server>_<tool>`; `mcp__<server>__<tool>` before March 2026). `mcp_context` names
// the server and tool when present. The payloads carry no call id: a call is paired on session, tool and input.

import { digest, obj, str } from '../payload.ts';
import { DOUBLE_UNDERSCORE, SINGLE_UNDERSCORE, splitToolName } from '../tool-name.ts';
import type { HookClient, HookEnv, ObservedCall, Payload, ReadContext } from '../types.ts';
import { pathOf } from './paths.ts';

const PHASES: Record<string, 'pre' | 'post'> = { BeforeTool: 'pre', AfterTool: 'post' };

function managedFile(env: HookEnv): string {
  if (env.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH) return env.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH;
  if (env.platform === 'darwin') return '/Library/Application Support/GeminiCli/settings.json';
  if (env.platform === 'win32')
    return pathOf(env).join(env.env.ProgramData || 'C:\\ProgramData', 'gemini-cli', 'settings.json');
  return '/etc/gemini-cli/settings.json';
}

function serverAndTool(payload: Payload, toolName: string, context: ReadContext) {
  const mcp = obj(payload.mcp_context);
  const server = str(mcp?.server_name);
  const tool = str(mcp?.tool_name);
  if (server && tool) return { server, tool };
  const split = toolName.startsWith(DOUBLE_UNDERSCORE.prefix)
    ? splitToolName(toolName, DOUBLE_UNDERSCORE, context.knownServers())
    : splitToolName(toolName, SINGLE_UNDERSCORE, context.knownServers());
  return split && server ? { server, tool: split.tool } : split;
}

function toolError(response: unknown): string | undefined {
  const error = obj(response)?.error;
  if (error === undefined || error === null || error === false) return undefined;
  return str(obj(error)?.message) ?? str(error) ?? 'the tool failed';
}

export const geminiCli: HookClient = {
  id: 'gemini-cli',
  agentType: 'gemini-cli',
  phase: (event) => PHASES[event],

  read(payload: Payload, event: string, context: ReadContext) {
    const phase = PHASES[event];
    const toolName = str(payload.tool_name);
    if (!phase || !toolName) return undefined;
    const names = serverAndTool(payload, toolName, context);
    if (!names) return undefined;
    const sessionId = str(payload.session_id);
    const call: ObservedCall = {
      phase,
      ...names,
      pairKey: [sessionId, toolName, digest(payload.tool_input ?? null)].join('\0'),
      clientEvent: event,
      input: payload.tool_input,
    };
    if (sessionId) call.sessionId = sessionId;
    if (phase === 'post') {
      call.output = payload.tool_response;
      const error = toolError(payload.tool_response);
      if (error !== undefined) call.error = error;
    }
    return call;
  },

  answer(decision) {
    if (decision.kind === 'allow') return { stdout: '{}', exitCode: 0 };
    return { stdout: JSON.stringify({ decision: 'deny', reason: decision.reason }), exitCode: 0 };
  },

  install: {
    userDir: (env) => pathOf(env).join(env.home, '.gemini'),
    userFile: (env) => pathOf(env).join(env.home, '.gemini', 'settings.json'),
    managedFile,
    layout: 'groups',
    events: [
      { event: 'BeforeTool', matcher: 'mcp_.*' },
      { event: 'AfterTool', matcher: 'mcp_.*' },
    ],
    handler: (command) => ({
      name: 'acp-agent',
      type: 'command',
      command,
      timeout: 10_000,
      description: 'Records MCP tool calls for the agent control plane',
    }),
  },
};
