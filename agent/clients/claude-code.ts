// Claude Code (https://code.claude.com/docs/en/mcp, /en/managed-mcp, /en/settings).
// - user scope: `mcpServers` of ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set);
// - local scope: `projects.<path>.mcpServers` of the same file, one map per project;
// - project scope: `.mcp.json` at a project's root;
// - managed scope: managed-mcp.json in the OS's system directory. When it exists it takes exclusive control: the
//   servers of every other scope are not loaded.
// Switched off: a project's `.mcp.json` servers named in `disabledMcpjsonServers` (settings files, or the
// project's entry in ~/.claude.json); any server named in the project's `disabledMcpServers` (toggled off in
// /mcp); any server named in managed settings' `deniedMcpServers`. Precedence: local, then project, then user.
import { at, entriesOf, isRecord, stringList } from '../discovery/entries.ts';
import { envVar, inHome, pathOf, programData, programFiles, systemPath } from '../discovery/os-paths.ts';
import type { ClientModule, ConfigFile, Documents, ScanContext, ServerEntry } from '../discovery/types.ts';

const jsonc = (path: string): ConfigFile => ({ path, format: 'jsonc' });

function configDir(ctx: ScanContext): string | undefined {
  return envVar(ctx, 'CLAUDE_CONFIG_DIR');
}

/** ~/.claude.json: the user and local scopes and the projects Claude Code has been run in. */
export const userFile = (ctx: ScanContext): string =>
  pathOf(ctx).join(configDir(ctx) ?? ctx.home, '.claude.json');
const userSettings = (ctx: ScanContext): string =>
  pathOf(ctx).join(configDir(ctx) ?? inHome(ctx, '.claude'), 'settings.json');

/** The managed (enterprise) directories, current first; Windows also has the location of older versions. */
function managedDirs(ctx: ScanContext): string[] {
  const p = pathOf(ctx);
  if (ctx.platform === 'darwin') return [systemPath(ctx, '/Library/Application Support/ClaudeCode')];
  if (ctx.platform === 'win32')
    return [p.join(programFiles(ctx), 'ClaudeCode'), p.join(programData(ctx), 'ClaudeCode')];
  return [systemPath(ctx, '/etc/claude-code')];
}

const projectFiles = (ctx: ScanContext, dir: string) => {
  const p = pathOf(ctx);
  return {
    mcp: p.join(dir, '.mcp.json'),
    settings: p.join(dir, '.claude', 'settings.json'),
    localSettings: p.join(dir, '.claude', 'settings.local.json'),
  };
};

function deniedNames(docs: Documents, ctx: ScanContext): Set<string> {
  const denied = new Set<string>();
  for (const dir of managedDirs(ctx)) {
    const list = at(docs.get(pathOf(ctx).join(dir, 'managed-settings.json')), 'deniedMcpServers');
    for (const item of Array.isArray(list) ? list : []) {
      if (isRecord(item) && typeof item.serverName === 'string') denied.add(item.serverName);
    }
  }
  return denied;
}

export const claudeCode: ClientModule = {
  agentType: 'claude-code',
  displayName: 'Claude Code',
  precedence: ['managed', 'local', 'project', 'user'],
  recordFiles: (ctx) => [jsonc(userFile(ctx))],
  projects(docs, ctx) {
    const projects = at(docs.get(userFile(ctx)), 'projects');
    return isRecord(projects) ? Object.keys(projects) : [];
  },
  files(ctx) {
    const files = [jsonc(userFile(ctx)), jsonc(userSettings(ctx))];
    for (const dir of managedDirs(ctx)) {
      files.push(jsonc(pathOf(ctx).join(dir, 'managed-mcp.json')));
      files.push(jsonc(pathOf(ctx).join(dir, 'managed-settings.json')));
    }
    for (const dir of ctx.projectDirs) files.push(...Object.values(projectFiles(ctx, dir)).map(jsonc));
    return files;
  },
  servers(docs, ctx) {
    const out: ServerEntry[] = [];
    const managedFile = managedDirs(ctx)
      .map((dir) => pathOf(ctx).join(dir, 'managed-mcp.json'))
      .find((file) => docs.has(file));
    if (managedFile) {
      out.push(
        ...entriesOf(at(docs.get(managedFile), 'mcpServers'), { scope: 'managed', file: managedFile }),
      );
    }
    const user = docs.get(userFile(ctx));
    out.push(...entriesOf(at(user, 'mcpServers'), { scope: 'user', file: userFile(ctx) }));
    const projects = at(user, 'projects');
    const rejectedEverywhere = new Set(stringList(at(docs.get(userSettings(ctx)), 'disabledMcpjsonServers')));
    const toggledOff = new Map<string, Set<string>>();
    for (const dir of ctx.projectDirs) {
      const record = isRecord(projects) ? projects[dir] : undefined;
      toggledOff.set(dir, new Set(stringList(at(record, 'disabledMcpServers'))));
      out.push(...entriesOf(at(record, 'mcpServers'), { scope: 'local', file: userFile(ctx), project: dir }));
      const files = projectFiles(ctx, dir);
      const rejected = new Set([
        ...rejectedEverywhere,
        ...stringList(at(record, 'disabledMcpjsonServers')),
        ...stringList(at(docs.get(files.settings), 'disabledMcpjsonServers')),
        ...stringList(at(docs.get(files.localSettings), 'disabledMcpjsonServers')),
      ]);
      for (const entry of entriesOf(at(docs.get(files.mcp), 'mcpServers'), {
        scope: 'project',
        file: files.mcp,
        project: dir,
      })) {
        if (entry.enabled && rejected.has(entry.name)) {
          Object.assign(entry, { enabled: false, disabledBy: 'disabledMcpjsonServers' });
        }
        out.push(entry);
      }
    }
    const denied = deniedNames(docs, ctx);
    for (const entry of out) {
      if (!entry.enabled) continue;
      if (managedFile && entry.scope !== 'managed') {
        Object.assign(entry, { enabled: false, disabledBy: 'managed-mcp.json (exclusive control)' });
      } else if (denied.has(entry.name)) {
        Object.assign(entry, { enabled: false, disabledBy: 'deniedMcpServers (managed settings)' });
      } else if (entry.project && toggledOff.get(entry.project)?.has(entry.name)) {
        Object.assign(entry, { enabled: false, disabledBy: 'disabledMcpServers' });
      }
    }
    return out;
  },
};
