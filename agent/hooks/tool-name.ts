// MCP tool names as clients spell them: `mcp__<server>__<tool>` (Claude Code, Codex), `mcp_<server>_<tool>`
// (Gemini CLI). A server name may itself contain the separator; a configured name that matches the longest prefix
// wins, else the name is cut at the first separator.

/** How Claude Code puts a server name into a tool name: characters outside [A-Za-z0-9_-] become `_`. */
export const normalizeServerName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '_');

export interface ToolNameFormat {
  prefix: string;
  separator: string;
}

export const DOUBLE_UNDERSCORE: ToolNameFormat = { prefix: 'mcp__', separator: '__' };
export const SINGLE_UNDERSCORE: ToolNameFormat = { prefix: 'mcp_', separator: '_' };

export function splitToolName(
  name: string,
  format: ToolNameFormat,
  known: readonly string[] = [],
): { server: string; tool: string } | undefined {
  if (!name.startsWith(format.prefix)) return undefined;
  const rest = name.slice(format.prefix.length);
  let best: { server: string; tool: string } | undefined;
  for (const server of known) {
    const head = `${normalizeServerName(server)}${format.separator}`;
    if (rest.startsWith(head) && rest.length > head.length && (!best || server.length > best.server.length))
      best = { server, tool: rest.slice(head.length) };
  }
  if (best) return best;
  const cut = rest.indexOf(format.separator);
  if (cut <= 0 || cut + format.separator.length >= rest.length) return undefined;
  return { server: rest.slice(0, cut), tool: rest.slice(cut + format.separator.length) };
}
