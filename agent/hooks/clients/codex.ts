// OpenAI Codex's hooks (https://developers.openai.com/codex/hooks): PreToolUse / PostToolUse in
// ~/.codex/hooks.json, the protocol Claude Code defined (tool-use-hooks.ts), with the model in every payload. Codex
// runs a non-managed hook only once the user has trusted it in /hooks. Its managed hooks live in
// requirements.toml, which the agent does not edit.
import type { HookClient, HookEnv } from '../types.ts';
import { pathOf } from './paths.ts';
import { answerToolUse, readToolUse } from './tool-use-hooks.ts';

const PHASES: Record<string, 'pre' | 'post'> = { PreToolUse: 'pre', PostToolUse: 'post' };

const codexHome = (env: HookEnv): string => env.env.CODEX_HOME || pathOf(env).join(env.home, '.codex');

export const codex: HookClient = {
  id: 'codex',
  agentType: 'codex',
  phase: (event) => PHASES[event],

  read(payload, event, context) {
    const phase = PHASES[event];
    return phase && readToolUse(payload, event, phase, context);
  },

  answer: (decision, event) => answerToolUse(decision, PHASES[event] === 'pre'),

  install: {
    userDir: codexHome,
    userFile: (env) => pathOf(env).join(codexHome(env), 'hooks.json'),
    managedNote:
      'Codex reads managed hooks from requirements.toml ([hooks]); add them there with your MDM (docs/endpoint-agent.md)',
    layout: 'groups',
    events: [
      { event: 'PreToolUse', matcher: 'mcp__.*' },
      { event: 'PostToolUse', matcher: 'mcp__.*' },
    ],
    handler: (command) => ({ type: 'command', command, timeout: 10 }),
    note: 'open /hooks in Codex once and trust the acp-agent hooks: Codex skips hooks it has not been told to trust',
  },
};
