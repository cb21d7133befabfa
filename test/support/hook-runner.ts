// Playing an AI client against the agent's hooks: the hook entry bundled as the single-file agent ships it, the
// command the install wrote read back from the client's settings file, and run through a shell as the client runs
// it, with a payload on stdin, from another working directory.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { parse } from 'jsonc-parser';
import { ourHook } from '#agent/hooks/command-line.ts';
import type { HookEnv } from '#agent/hooks/types.ts';
import { Spool } from '#agent/spool/spool.ts';
import { type ChildOutcome, runProcess } from '#test/support/child.ts';
import { PROJECT_ROOT } from '#test/support/fresh-copy.ts';

export const HOOK_FIXTURES = fileURLToPath(new URL('../unit/agent/hooks/fixtures/', import.meta.url));

export const fixture = (client: string, name: string): string =>
  readFileSync(join(HOOK_FIXTURES, client, name), 'utf8');

/** Where each client's user settings live in a home, and the fixture (a user's own settings) that seeds it. */
export const USER_FILES = {
  'claude-code': ['.claude/settings.json', 'claude-code/settings.json'],
  cursor: ['.cursor/hooks.json', 'cursor/hooks.json'],
  'gemini-cli': ['.gemini/settings.json', 'gemini-cli/settings.jsonc'],
  codex: ['.codex/hooks.json', 'codex/hooks.json'],
  windsurf: ['.codeium/windsurf/hooks.json', 'windsurf/hooks.json'],
} as const;
export type HookClientId = keyof typeof USER_FILES;
export const HOOK_CLIENT_IDS = Object.keys(USER_FILES) as HookClientId[];

/** A home with these clients set up with their fixture settings, and where the agent keeps its state. */
export function fixtureHome(clients: readonly HookClientId[] = HOOK_CLIENT_IDS) {
  const home = mkdtempSync(join(tmpdir(), 'hooks-home-'));
  for (const client of clients) {
    const [file, source] = USER_FILES[client];
    mkdirSync(dirname(join(home, file)), { recursive: true });
    cpSync(join(HOOK_FIXTURES, source), join(home, file));
  }
  const env: HookEnv = { home, platform: process.platform, env: {} };
  return {
    home,
    env,
    stateDir: join(home, '.acp-agent'),
    file: (client: HookClientId) => join(home, USER_FILES[client][0]),
  };
}

/** The hook's entry bundled into one CommonJS file, as a Node ≥ 20 runs it; returns its path. */
export function buildHookBundle(): string {
  const outfile = join(mkdtempSync(join(tmpdir(), 'hook-bundle-')), 'acp-agent-hook.cjs');
  buildSync({
    entryPoints: [fileURLToPath(new URL('../../agent/hooks/entry.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

/**
 * The agent's single file as `npm run agent:build` makes it (what laptops run, and what the installed hook commands
 * start), written to `outfile`; `version` is the one it reports. Returns `outfile`.
 */
export function buildAgentFile(outfile: string, version?: string): string {
  const built = spawnSync(process.execPath, ['scripts/agent-build.ts', '--outfile', outfile], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...(version ? { AGENT_VERSION: version } : {}) },
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`npm run agent:build failed: ${built.stderr}`);
  return outfile;
}

/** The agent's command for one event, read from a client's settings file the way the client reads it. */
export function installedCommand(settingsFile: string, client: string, event: string): string {
  const settings = parse(readFileSync(settingsFile, 'utf8')) as { hooks?: Record<string, unknown[]> };
  for (const entry of settings.hooks?.[event] ?? []) {
    const handlers = (entry as { hooks?: unknown[] }).hooks ?? [entry];
    for (const handler of handlers) {
      const command = (handler as { command?: unknown }).command;
      const ours = ourHook(command);
      if (ours?.client === client && ours.event === event) return command as string;
    }
  }
  throw new Error(`no ${client} ${event} hook of the agent in ${settingsFile}`);
}

export interface HookRun extends ChildOutcome {
  ms: number;
}

/** Runs a hook command through sh, as the clients do, with `payload` on stdin. */
export async function runHookCommand(
  command: string,
  payload: string,
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<HookRun> {
  const started = performance.now();
  const outcome = await runProcess('/bin/sh', ['-c', command], { ...options, input: payload });
  return { ...outcome, ms: performance.now() - started };
}

/** Everything in an agent's spool, oldest first (read without acknowledging). */
export function spooledEvents<T = Record<string, unknown>>(stateDir: string): T[] {
  return new Spool(join(stateDir, 'spool'), { graceMs: 0 })
    .readBatch<T>(100_000)
    .map((record) => record.value);
}
