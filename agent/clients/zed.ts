// Zed (https://zed.dev/docs/ai/mcp): `context_servers` of its settings.json, in $XDG_CONFIG_HOME/zed or
// ~/.config/zed (Linux and macOS) and %APPDATA%\Zed (Windows), and of .zed/settings.json in a project. A custom
// server has `command` / `args` / `env` (older settings: `command: {path, args, env}`), a remote one `url` /
// `headers`; a server from a Zed extension has only its `settings` (the extension starts it). `enabled: false`
// switches one off.
import { at, entriesOf, entryShape, isRecord, stringList } from '../discovery/entries.ts';
import { envVar, inHome, pathOf, xdgConfigHome } from '../discovery/os-paths.ts';
import type { ClientModule, ScanContext } from '../discovery/types.ts';

function userFile(ctx: ScanContext): string {
  if (ctx.platform === 'win32') {
    return pathOf(ctx).join(
      envVar(ctx, 'APPDATA') ?? inHome(ctx, 'AppData', 'Roaming'),
      'Zed',
      'settings.json',
    );
  }
  return pathOf(ctx).join(xdgConfigHome(ctx), 'zed', 'settings.json');
}
const projectFile = (ctx: ScanContext, dir: string) => pathOf(ctx).join(dir, '.zed', 'settings.json');

function shape(config: Record<string, unknown>) {
  const legacy = config.command;
  if (isRecord(legacy) && typeof legacy.path === 'string') {
    return { transport: 'stdio' as const, command: legacy.path, args: stringList(legacy.args) };
  }
  return entryShape(config);
}

export const zed: ClientModule = {
  agentType: 'zed',
  displayName: 'Zed',
  precedence: ['project', 'user'],
  files: (ctx) =>
    [userFile(ctx), ...ctx.projectDirs.map((dir) => projectFile(ctx, dir))].map((path) => ({
      path,
      format: 'jsonc' as const,
    })),
  servers(docs, ctx) {
    const entries = [
      ...entriesOf(
        at(docs.get(userFile(ctx)), 'context_servers'),
        { scope: 'user', file: userFile(ctx) },
        shape,
      ),
      ...ctx.projectDirs.flatMap((dir) =>
        entriesOf(
          at(docs.get(projectFile(ctx, dir)), 'context_servers'),
          { scope: 'project', file: projectFile(ctx, dir), project: dir },
          shape,
        ),
      ),
    ];
    for (const entry of entries) {
      if (!entry.command && entry.url === undefined)
        entry.source = { type: 'executable', name: '(zed extension)' };
    }
    return entries;
  },
};
