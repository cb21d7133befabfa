// Windsurf (https://docs.windsurf.com/windsurf/cascade/mcp): `mcpServers` of ~/.codeium/windsurf/mcp_config.json
// (%USERPROFILE%\.codeium\windsurf on Windows). A remote server has `serverUrl` (or `url`); `disabled: true`
// switches one off.
import { at, entriesOf } from '../discovery/entries.ts';
import { inHome } from '../discovery/os-paths.ts';
import type { ClientModule, ScanContext } from '../discovery/types.ts';

const configFile = (ctx: ScanContext) => inHome(ctx, '.codeium', 'windsurf', 'mcp_config.json');

export const windsurf: ClientModule = {
  agentType: 'windsurf',
  displayName: 'Windsurf',
  precedence: [],
  files: (ctx) => [{ path: configFile(ctx), format: 'jsonc' }],
  servers: (docs, ctx) =>
    entriesOf(at(docs.get(configFile(ctx)), 'mcpServers'), { scope: 'user', file: configFile(ctx) }),
};
