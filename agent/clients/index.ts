// The AI clients discovery knows: one module each (agent/discovery/types.ts, ClientModule).
import type { ClientModule } from '../discovery/types.ts';
import { claudeCode } from './claude-code.ts';
import { claudeDesktop } from './claude-desktop.ts';
import { codex } from './codex.ts';
import { cursor } from './cursor.ts';
import { geminiCli } from './gemini-cli.ts';
import { vscode } from './vscode.ts';
import { windsurf } from './windsurf.ts';
import { zed } from './zed.ts';

export const CLIENTS: readonly ClientModule[] = [
  claudeCode,
  claudeDesktop,
  cursor,
  vscode,
  windsurf,
  codex,
  geminiCli,
  zed,
];
