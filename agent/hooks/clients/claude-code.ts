// Claude Code's hooks (https://code.claude.com/docs/en/hooks): PreToolUse, PostToolUse and PostToolUseFailure
// matched on MCP tools, paired on tool_use_id (tool-use-hooks.ts); SessionStart for the session's model, which no
// other payload carries. Newer versions name the server in `mcp_server`.
import { obj, str } from '../payload.ts';
import type { HookClient, HookEnv } from '../types.ts';
import { pathOf } from './paths.ts';
import { answerToolUse, readToolUse } from './tool-use-hooks.ts';

const PHASES: Record<string, 'pre' | 'post' | 'session'> = {
  PreToolUse: 'pre',
  PostToolUse: 'post',
  PostToolUseFailure: 'post',
  SessionStart: 'session',
};

const configDir = (env: HookEnv): string =>
  env.env.CLAUDE_CONFIG_DIR || pathOf(env).join(env.home, '.claude');

/** Managed settings: a drop-in next to managed-settings.json (https://code.claude.com/docs/en/managed-settings). */
function managedDir(env: HookEnv): string {
  if (env.platform === 'darwin') return '/Library/Application Support/ClaudeCode';
  if (env.platform === 'win32')
    return pathOf(env).join(env.env.ProgramFiles || 'C:\\Program Files', 'ClaudeCode');
  return '/etc/claude-code';
}

export const claudeCode: HookClient = {
  id: 'claude-code',
  agentType: 'claude-code',
  phase: (event) => PHASES[event],

  read(payload, event, context) {
    const phase = PHASES[event];
    if (phase !== 'session')
      return phase && readToolUse(payload, event, phase, context, str(obj(payload.mcp_server)?.name));
    const sessionId = str(payload.session_id);
    return sessionId ? { phase, sessionId, model: str(payload.model) } : undefined;
  },

  answer: (decision, event) => answerToolUse(decision, PHASES[event] === 'pre'),

  install: {
    userDir: configDir,
    userFile: (env) => pathOf(env).join(configDir(env), 'settings.json'),
    managedFile: (env) => pathOf(env).join(managedDir(env), 'managed-settings.d', '50-acp-agent.json'),
    layout: 'groups',
    events: [
      { event: 'PreToolUse', matcher: 'mcp__.*' },
      { event: 'PostToolUse', matcher: 'mcp__.*' },
      { event: 'PostToolUseFailure', matcher: 'mcp__.*' },
      { event: 'SessionStart' },
    ],
    handler: (command) => ({ type: 'command', command, timeout: 10 }),
  },
};
