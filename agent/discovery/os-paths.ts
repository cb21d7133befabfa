// The per-OS directories the clients keep their settings in, from the injected home, platform and environment
// (never the running process's), so that the paths of every OS can be computed, and tested, on any OS.
import { posix, win32 } from 'node:path';
import type { ScanContext } from './types.ts';

export const pathOf = (ctx: ScanContext) => (ctx.platform === 'win32' ? win32 : posix);

/** An environment variable; on Windows names are case-insensitive (APPDATA, AppData). */
export function envVar(ctx: ScanContext, name: string): string | undefined {
  const direct = ctx.env[name];
  if (direct || ctx.platform !== 'win32') return direct || undefined;
  const key = Object.keys(ctx.env).find((k) => k.toUpperCase() === name.toUpperCase());
  return (key && ctx.env[key]) || undefined;
}

export const inHome = (ctx: ScanContext, ...parts: string[]) => pathOf(ctx).join(ctx.home, ...parts);

/**
 * Where desktop apps keep per-user settings: %APPDATA% (Windows), ~/Library/Application Support (macOS),
 * $XDG_CONFIG_HOME or ~/.config (Linux and the rest).
 */
export function userAppData(ctx: ScanContext): string {
  if (ctx.platform === 'win32') return envVar(ctx, 'APPDATA') ?? inHome(ctx, 'AppData', 'Roaming');
  if (ctx.platform === 'darwin') return inHome(ctx, 'Library', 'Application Support');
  return xdgConfigHome(ctx);
}

/** $XDG_CONFIG_HOME, else ~/.config (the XDG default). */
export const xdgConfigHome = (ctx: ScanContext): string =>
  envVar(ctx, 'XDG_CONFIG_HOME') ?? inHome(ctx, '.config');

/** A system-wide path of macOS or Linux (e.g. /etc/claude-code), under the context's system root. */
export const systemPath = (ctx: ScanContext, path: string): string =>
  ctx.systemRoot ? posix.join(ctx.systemRoot, path) : path;

export const programData = (ctx: ScanContext): string => envVar(ctx, 'ProgramData') ?? 'C:\\ProgramData';
export const programFiles = (ctx: ScanContext): string => envVar(ctx, 'ProgramFiles') ?? 'C:\\Program Files';
