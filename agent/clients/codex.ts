// OpenAI Codex CLI (https://developers.openai.com/codex/mcp, https://developers.openai.com/codex/config-reference):
// `[mcp_servers.<name>]` tables of config.toml in $CODEX_HOME (default ~/.codex), and of .codex/config.toml in a
// trusted project. A server has `command` / `args` / `env`, or a streamable HTTP `url` (with
// `bearer_token_env_var`, `http_headers`); `enabled = false` switches one off. The `[projects."<path>"]` tables
// are the projects Codex has been told to trust: discovery looks in them.
import { at, entriesOf, isRecord } from '../discovery/entries.ts';
import { envVar, inHome, pathOf } from '../discovery/os-paths.ts';
import type { ClientModule, ConfigFile, ScanContext } from '../discovery/types.ts';

const userFile = (ctx: ScanContext) =>
  pathOf(ctx).join(envVar(ctx, 'CODEX_HOME') ?? inHome(ctx, '.codex'), 'config.toml');
const projectFile = (ctx: ScanContext, dir: string) => pathOf(ctx).join(dir, '.codex', 'config.toml');
const toml = (path: string): ConfigFile => ({ path, format: 'toml' });

export const codex: ClientModule = {
  agentType: 'codex',
  displayName: 'OpenAI Codex CLI',
  precedence: ['project', 'user'],
  recordFiles: (ctx) => [toml(userFile(ctx))],
  projects(docs, ctx) {
    const projects = at(docs.get(userFile(ctx)), 'projects');
    return isRecord(projects) ? Object.keys(projects) : [];
  },
  files: (ctx) => [toml(userFile(ctx)), ...ctx.projectDirs.map((dir) => toml(projectFile(ctx, dir)))],
  servers: (docs, ctx) => [
    ...entriesOf(at(docs.get(userFile(ctx)), 'mcp_servers'), { scope: 'user', file: userFile(ctx) }),
    ...ctx.projectDirs.flatMap((dir) =>
      entriesOf(at(docs.get(projectFile(ctx, dir)), 'mcp_servers'), {
        scope: 'project',
        file: projectFile(ctx, dir),
        project: dir,
      }),
    ),
  ],
};
