// The command line a client runs for a hook event, and how the agent recognizes its own entries in a settings file.
// The command carries absolute paths (node, the agent, the state directory) so that it runs from any working
// directory and in the sanitized environments some clients give their hooks.
import { fileURLToPath } from 'node:url';

export interface HookCommand {
  node: string;
  entry: string;
  client: string;
  event: string;
  /** Absent in managed settings: each user's hook then uses their own ~/.acp-agent. */
  stateDir?: string;
  platform: NodeJS.Platform;
}

const SAFE_POSIX = /^[A-Za-z0-9_/.:@%+=,-]+$/;

/** A word for sh (Claude Code, Codex and Gemini CLI run hook commands through a shell). */
const posixWord = (word: string): string =>
  SAFE_POSIX.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/** A word for cmd.exe, PowerShell and Git Bash alike: double quotes, which none of them needs escaped inside. */
function windowsWord(word: string): string {
  if (/["%$`]/.test(word)) throw new Error(`cannot quote ${JSON.stringify(word)} for a Windows hook command`);
  return /[\s&|<>^()!;,']/.test(word) ? `"${word}"` : word;
}

export function hookCommandLine(command: HookCommand): string {
  const word = command.platform === 'win32' ? windowsWord : posixWord;
  const parts = [
    word(command.node),
    word(command.entry),
    'hook',
    '--client',
    command.client,
    '--event',
    command.event,
  ];
  if (command.stateDir) parts.push('--state', word(command.stateDir));
  return parts.join(' ');
}

const OURS = /(?:^|\s)hook --client ([a-z0-9-]+) --event ([A-Za-z_]+)(?=\s|$)/;

/** The client and event of one of the agent's own hook commands, or undefined for anything else. */
export function ourHook(command: unknown): { client: string; event: string } | undefined {
  if (typeof command !== 'string') return undefined;
  const m = OURS.exec(command);
  return m ? { client: m[1] as string, event: m[2] as string } : undefined;
}

/**
 * The file the installed command runs: the hook's own small entry when the agent runs from its sources, else the
 * agent's single file (`<agent> hook …`), which must dispatch `hook` before loading anything else.
 */
export function defaultHookEntry(): string {
  const here = import.meta.url as string | undefined;
  if (here?.endsWith('.ts')) return fileURLToPath(new URL('./entry.ts', here));
  return process.argv[1] ?? 'acp-agent';
}
