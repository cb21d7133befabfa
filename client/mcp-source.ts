// An MCP server's source identity as one line of text (`npm @modelcontextprotocol/server-github@2025.4.8`,
// `oci ghcr.io/github/github-mcp-server:v0.9.1`, `remote https://api.githubcopilot.com`): how the agent's `scan` and
// the console write it, so that an admin reads the same words in both.
import type { components } from './openapi.d.ts';

type McpSource = components['schemas']['McpSourceIdentity'];

export function mcpSourceText(source: McpSource): string {
  if (!source.version) return `${source.type} ${source.name}`;
  // An image's tag follows a colon and its digest (sha256:…) an at sign, as docker writes them.
  const sep = source.type === 'oci' && !source.version.includes(':') ? ':' : '@';
  return `${source.type} ${source.name}${sep}${source.version}`;
}
