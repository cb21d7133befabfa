// Gemini CLI (https://geminicli.com/docs/tools/mcp-server, https://geminicli.com/docs/get-started/configuration):
// `mcpServers` of ~/.gemini/settings.json (user), .gemini/settings.json in a project, and the system settings file
// (/etc/gemini-cli, /Library/Application Support/GeminiCli, C:\ProgramData\gemini-cli; or
// $GEMINI_CLI_SYSTEM_SETTINGS_PATH), which overrides the others. `command` is stdio, `httpUrl` streamable HTTP,
// `url` SSE. Switched off: names in `mcp.excluded` (or the older `excludeMCPServers`), names missing from a set
// `mcp.allowed` (`allowMCPServers`), and `gemini mcp disable` (~/.gemini/mcp-server-enablement.json, lowercase
// names).
import { at, entriesOf, entryShape, isRecord, stringList } from '../discovery/entries.ts';
import { envVar, inHome, pathOf, programData, systemPath } from '../discovery/os-paths.ts';
import type { ClientModule, Documents, ScanContext, ServerEntry } from '../discovery/types.ts';

const userFile = (ctx: ScanContext) => inHome(ctx, '.gemini', 'settings.json');
const enablementFile = (ctx: ScanContext) => inHome(ctx, '.gemini', 'mcp-server-enablement.json');
const projectFile = (ctx: ScanContext, dir: string) => pathOf(ctx).join(dir, '.gemini', 'settings.json');
function systemFile(ctx: ScanContext): string {
  const override = envVar(ctx, 'GEMINI_CLI_SYSTEM_SETTINGS_PATH');
  if (override) return override;
  if (ctx.platform === 'darwin')
    return systemPath(ctx, '/Library/Application Support/GeminiCli/settings.json');
  if (ctx.platform === 'win32') return pathOf(ctx).join(programData(ctx), 'gemini-cli', 'settings.json');
  return systemPath(ctx, '/etc/gemini-cli/settings.json');
}

const shape = (config: Record<string, unknown>) =>
  entryShape(config, (key) => (key === 'httpUrl' ? 'http' : 'sse'));

/** Names excluded, and the allow list if one is set, over the settings files (the last one set wins). */
function filters(docs: Documents, files: string[]) {
  let excluded: string[] = [];
  let allowed: string[] | undefined;
  for (const file of files) {
    const doc = docs.get(file);
    const ex = at(doc, 'mcp', 'excluded') ?? at(doc, 'excludeMCPServers');
    const al = at(doc, 'mcp', 'allowed') ?? at(doc, 'allowMCPServers');
    if (Array.isArray(ex)) excluded = stringList(ex);
    if (Array.isArray(al)) allowed = stringList(al);
  }
  return { excluded: new Set(excluded), allowed: allowed && new Set(allowed) };
}

export const geminiCli: ClientModule = {
  agentType: 'gemini-cli',
  displayName: 'Gemini CLI',
  precedence: ['system', 'project', 'user'],
  files: (ctx) =>
    [
      userFile(ctx),
      enablementFile(ctx),
      systemFile(ctx),
      ...ctx.projectDirs.map((d) => projectFile(ctx, d)),
    ].map((path) => ({ path, format: 'jsonc' as const })),
  servers(docs, ctx) {
    const switchedOff = docs.get(enablementFile(ctx));
    const apply = (entries: ServerEntry[], settingsFiles: string[]) => {
      const { excluded, allowed } = filters(docs, settingsFiles);
      for (const entry of entries) {
        if (!entry.enabled) continue;
        const record = isRecord(switchedOff) ? switchedOff[entry.name.trim().toLowerCase()] : undefined;
        const reason = excluded.has(entry.name)
          ? 'mcp.excluded'
          : allowed && !allowed.has(entry.name)
            ? 'not in mcp.allowed'
            : at(record, 'enabled') === false
              ? 'mcp-server-enablement.json'
              : undefined;
        if (reason) Object.assign(entry, { enabled: false, disabledBy: reason });
      }
      return entries;
    };
    const read = (file: string, scope: string, project?: string) =>
      entriesOf(at(docs.get(file), 'mcpServers'), { scope, file, ...(project ? { project } : {}) }, shape);
    const global = [userFile(ctx), systemFile(ctx)];
    return [
      ...apply(read(userFile(ctx), 'user'), global),
      ...apply(read(systemFile(ctx), 'system'), global),
      ...ctx.projectDirs.flatMap((dir) =>
        apply(read(projectFile(ctx, dir), 'project', dir), [
          userFile(ctx),
          projectFile(ctx, dir),
          systemFile(ctx),
        ]),
      ),
    ];
  },
};
