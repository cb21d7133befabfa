// Cursor's hooks (https://cursor.com/docs/agent/hooks): beforeMCPExecution / afterMCPExecution in hooks.json
// ("version": 1). The payloads carry no call id, so a call is paired on conversation, generation, tool and input;
// afterMCPExecution reports the run time itself. beforeMCPExecution fails closed on a crash or invalid output, so
// the hook always answers with the documented JSON permission.
import { basename } from 'node:path';
import { digest, mcpResultError, num, parsedJson, str } from '../payload.ts';
import { type HookClient, type HookEnv, type ObservedCall, type Payload, UNKNOWN_SERVER } from '../types.ts';
import { pathOf } from './paths.ts';

const PHASES: Record<string, 'pre' | 'post'> = { beforeMCPExecution: 'pre', afterMCPExecution: 'post' };

function managedFile(env: HookEnv): string {
  if (env.platform === 'darwin') return '/Library/Application Support/Cursor/hooks.json';
  if (env.platform === 'win32')
    return pathOf(env).join(env.env.ProgramData || 'C:\\ProgramData', 'Cursor', 'hooks.json');
  return '/etc/cursor/hooks.json';
}

/**
 * The server: named by newer Cursor builds (`mcp_server_name`), or in an `MCP:<server>:<tool>` tool name; else the
 * host of its URL, or the program its command starts (never the rest of the command line: it may hold secrets).
 */
function serverAndTool(payload: Payload, toolName: string): { server: string; tool: string } {
  const prefixed = /^MCP:([^:]+):(.+)$/.exec(toolName);
  const tool = prefixed?.[2] ?? toolName;
  const named = str(payload.mcp_server_name) ?? prefixed?.[1];
  if (named) return { server: named, tool };
  const url = str(payload.mcp_server_url) ?? str(payload.url);
  if (url) {
    try {
      return { server: new URL(url).hostname || UNKNOWN_SERVER, tool };
    } catch {}
  }
  const program = str(payload.command)?.trim().split(/\s+/)[0];
  return { server: program ? basename(program) : UNKNOWN_SERVER, tool };
}

export const cursor: HookClient = {
  id: 'cursor',
  agentType: 'cursor',
  phase: (event) => PHASES[event],

  read(payload: Payload, event: string) {
    const phase = PHASES[event];
    const toolName = str(payload.tool_name);
    if (!phase || !toolName) return undefined;
    const sessionId = str(payload.conversation_id);
    const call: ObservedCall = {
      phase,
      ...serverAndTool(payload, toolName),
      pairKey: [sessionId, str(payload.generation_id), toolName, digest(payload.tool_input ?? '')].join('\0'),
      clientEvent: event,
      input: parsedJson(payload.tool_input),
    };
    if (sessionId) call.sessionId = sessionId;
    const model = str(payload.model);
    if (model && model !== 'default') call.model = model;
    const actor = str(payload.user_email);
    if (actor) call.actorEmail = actor;
    if (phase === 'post') {
      call.output = parsedJson(payload.result_json);
      const duration = num(payload.duration);
      if (duration !== undefined) call.durationMs = duration;
      const error = mcpResultError(payload.result_json);
      if (error !== undefined) call.error = error;
    }
    return call;
  },

  answer(decision, event) {
    if (PHASES[event] !== 'pre') return { stdout: '{}', exitCode: 0 };
    if (decision.kind === 'allow') return { stdout: JSON.stringify({ permission: 'allow' }), exitCode: 0 };
    return {
      stdout: JSON.stringify({
        permission: 'deny',
        user_message: decision.reason,
        agent_message: decision.reason,
      }),
      exitCode: 0,
    };
  },

  install: {
    userDir: (env) => pathOf(env).join(env.home, '.cursor'),
    userFile: (env) => pathOf(env).join(env.home, '.cursor', 'hooks.json'),
    managedFile,
    layout: 'flat',
    events: [{ event: 'beforeMCPExecution' }, { event: 'afterMCPExecution' }],
    handler: (command) => ({ command, timeout: 10 }),
    required: { version: 1 },
  },
};
