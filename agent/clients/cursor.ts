// Cursor (https://cursor.com/docs/mcp): `mcpServers` of ~/.cursor/mcp.json (global, on every OS under the
// home directory) and of .cursor/mcp.json in a project. A project's file wins over the global one for a name.
import { at, entriesOf } from '../discovery/entries.ts';
import { inHome, pathOf } from '../discovery/os-paths.ts';
import type { ClientModule, ScanContext } from '../discovery/types.ts';

const userFile = (ctx: ScanContext) => inHome(ctx, '.cursor', 'mcp.json');
const projectFile = (ctx: ScanContext, dir: string) => pathOf(ctx).join(dir, '.cursor', 'mcp.json');

export const cursor: ClientModule = {
  agentType: 'cursor',
  displayName: 'Cursor',
  precedence: ['project', 'user'],
  files: (ctx) => [
    { path: userFile(ctx), format: 'jsonc' },
    ...ctx.projectDirs.map((dir) => ({ path: projectFile(ctx, dir), format: 'jsonc' as const })),
  ],
  servers: (docs, ctx) => [
    ...entriesOf(at(docs.get(userFile(ctx)), 'mcpServers'), { scope: 'user', file: userFile(ctx) }),
    ...ctx.projectDirs.flatMap((dir) =>
      entriesOf(at(docs.get(projectFile(ctx, dir)), 'mcpServers'), {
        scope: 'project',
        file: projectFile(ctx, dir),
        project: dir,
      }),
    ),
  ],
};
