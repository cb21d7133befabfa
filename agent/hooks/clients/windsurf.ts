// Windsurf's Cascade hooks (https://docs.windsurf.com/windsurf/cascade/hooks): pre_mcp_tool_use /
// post_mcp_tool_use in hooks.json. The payloads name server and tool but carry no call id: a call is paired on
// trajectory, turn, server, tool and arguments. post_mcp_tool_use fires only on success, so a failed call ends as
// an unpaired invocation. A pre-hook blocks by exiting 2.

import { digest, obj, str } from '../payload.ts';
import type { HookClient, HookEnv, ObservedCall, Payload } from '../types.ts';
import { pathOf } from './paths.ts';

const PHASES: Record<string, 'pre' | 'post'> = { pre_mcp_tool_use: 'pre', post_mcp_tool_use: 'post' };

function managedFile(env: HookEnv): string {
  if (env.platform === 'darwin') return '/Library/Application Support/Windsurf/hooks.json';
  if (env.platform === 'win32')
    return pathOf(env).join(env.env.ProgramData || 'C:\\ProgramData', 'Windsurf', 'hooks.json');
  return '/etc/windsurf/hooks.json';
}

export const windsurf: HookClient = {
  id: 'windsurf',
  agentType: 'windsurf',
  phase: (event) => PHASES[event],

  read(payload: Payload, event: string) {
    const phase = PHASES[event];
    const info = obj(payload.tool_info);
    const server = str(info?.mcp_server_name);
    const tool = str(info?.mcp_tool_name);
    if (!phase || !server || !tool) return undefined;
    const sessionId = str(payload.trajectory_id);
    const call: ObservedCall = {
      phase,
      server,
      tool,
      pairKey: [
        sessionId,
        str(payload.execution_id),
        server,
        tool,
        digest(info?.mcp_tool_arguments ?? null),
      ].join('\0'),
      clientEvent: event,
      input: info?.mcp_tool_arguments,
    };
    if (sessionId) call.sessionId = sessionId;
    if (phase === 'post') call.output = info?.mcp_result;
    return call;
  },

  answer(decision, event) {
    if (decision.kind === 'allow' || PHASES[event] !== 'pre') return { stdout: '', exitCode: 0 };
    return { stdout: '', stderr: decision.reason, exitCode: 2 };
  },

  install: {
    userDir: (env) => pathOf(env).join(env.home, '.codeium', 'windsurf'),
    userFile: (env) => pathOf(env).join(env.home, '.codeium', 'windsurf', 'hooks.json'),
    managedFile,
    layout: 'flat',
    events: [{ event: 'pre_mcp_tool_use' }, { event: 'post_mcp_tool_use' }],
    handler: (command) => ({ command, show_output: false }),
  },
};
