// The clients whose tool calls the agent captures through their own hooks.
import type { HookClient } from '../types.ts';
import { claudeCode } from './claude-code.ts';
import { codex } from './codex.ts';
import { cursor } from './cursor.ts';
import { geminiCli } from './gemini-cli.ts';
import { windsurf } from './windsurf.ts';

export const HOOK_CLIENTS: readonly HookClient[] = [claudeCode, cursor, geminiCli, codex, windsurf];

export const hookClient = (id: string): HookClient | undefined =>
  HOOK_CLIENTS.find((client) => client.id === id);
