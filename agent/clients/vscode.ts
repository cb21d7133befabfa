// VS Code with GitHub Copilot (https://code.visualstudio.com/docs/copilot/reference/mcp-configuration):
// - user: `servers` of mcp.json in the user profile directory (Code/User under %APPDATA%, ~/Library/Application
//   Support or $XDG_CONFIG_HOME), and the `mcp.servers` of its settings.json;
// - workspace: `servers` of .vscode/mcp.json in a project, and `mcp.servers` of its .vscode/settings.json.
// VS Code Insiders keeps the same files under `Code - Insiders`. The files are JSONC. VS Code records a server
// switched off in its own state store, not in these files, so every server read here is reported enabled.
import { at, entriesOf } from '../discovery/entries.ts';
import { pathOf, userAppData } from '../discovery/os-paths.ts';
import type { ClientModule, ScanContext, ServerEntry } from '../discovery/types.ts';

const PRODUCTS = ['Code', 'Code - Insiders'];

const userFiles = (ctx: ScanContext) =>
  PRODUCTS.flatMap((product) => {
    const dir = pathOf(ctx).join(userAppData(ctx), product, 'User');
    return [
      { path: pathOf(ctx).join(dir, 'mcp.json'), key: ['servers'] },
      { path: pathOf(ctx).join(dir, 'settings.json'), key: ['mcp', 'servers'] },
    ];
  });
const workspaceFiles = (ctx: ScanContext, dir: string) => [
  { path: pathOf(ctx).join(dir, '.vscode', 'mcp.json'), key: ['servers'] },
  { path: pathOf(ctx).join(dir, '.vscode', 'settings.json'), key: ['mcp', 'servers'] },
];

export const vscode: ClientModule = {
  agentType: 'vscode',
  displayName: 'VS Code (GitHub Copilot)',
  precedence: ['workspace', 'user'],
  files: (ctx) =>
    [...userFiles(ctx), ...ctx.projectDirs.flatMap((dir) => workspaceFiles(ctx, dir))].map(({ path }) => ({
      path,
      format: 'jsonc',
    })),
  servers(docs, ctx) {
    const out: ServerEntry[] = [];
    for (const file of userFiles(ctx)) {
      out.push(...entriesOf(at(docs.get(file.path), ...file.key), { scope: 'user', file: file.path }));
    }
    for (const dir of ctx.projectDirs) {
      for (const file of workspaceFiles(ctx, dir)) {
        out.push(
          ...entriesOf(at(docs.get(file.path), ...file.key), {
            scope: 'workspace',
            file: file.path,
            project: dir,
          }),
        );
      }
    }
    return out;
  },
};
