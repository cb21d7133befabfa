// Claude Desktop (https://modelcontextprotocol.io/quickstart/user): `mcpServers` of claude_desktop_config.json in
// ~/Library/Application Support/Claude (macOS) or %APPDATA%\Claude (Windows). Anthropic ships no Linux build; the
// community builds keep the file in $XDG_CONFIG_HOME/Claude, which is read there.
import { at, entriesOf } from '../discovery/entries.ts';
import { pathOf, userAppData } from '../discovery/os-paths.ts';
import type { ClientModule, ScanContext } from '../discovery/types.ts';

const configFile = (ctx: ScanContext) =>
  pathOf(ctx).join(userAppData(ctx), 'Claude', 'claude_desktop_config.json');

export const claudeDesktop: ClientModule = {
  agentType: 'claude-desktop',
  displayName: 'Claude Desktop',
  precedence: [],
  files: (ctx) => [{ path: configFile(ctx), format: 'jsonc' }],
  servers: (docs, ctx) =>
    entriesOf(at(docs.get(configFile(ctx)), 'mcpServers'), { scope: 'user', file: configFile(ctx) }),
};
