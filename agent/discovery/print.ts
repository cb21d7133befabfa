// What `agent scan` prints: a table of the clients and their MCP servers, a line per client on whether its tool
// calls can be captured, and the warnings; or (--json) the same facts as JSON. Neither shows a command, an
// argument, an env value, a header or a URL: the output of a scan often lands in an MDM log.
import { mcpSourceText } from '#client/mcp-source.ts';
import type { ScanResult } from './types.ts';

const tilde = (path: string, home: string) => (path.startsWith(home) ? `~${path.slice(home.length)}` : path);

/** The scan without any entry's contents: what `agent scan --json` prints. */
export function scanView(
  scan: ScanResult,
  home: string,
  fingerprint?: (name: string, config: Record<string, unknown>) => string,
) {
  return {
    clients: scan.clients.map((client) => ({
      agentType: client.agentType,
      displayName: client.displayName,
      capture: client.capture,
      ...(client.version ? { version: client.version } : {}),
      files: client.files.map((f) => tilde(f, home)),
      servers: client.servers.map((s) => ({
        name: s.name,
        scope: s.scope,
        ...(s.project ? { project: tilde(s.project, home) } : {}),
        file: tilde(s.file, home),
        transport: s.transport,
        enabled: s.enabled,
        ...(s.disabledBy ? { disabledBy: s.disabledBy } : {}),
        ...(s.proxied ? { proxied: true } : {}),
        source: s.source,
        ...(fingerprint ? { fingerprint: fingerprint(s.name, s.config) } : {}),
        overriddenBy: s.overriddenBy.map((o) => (o.project ? { ...o, project: tilde(o.project, home) } : o)),
      })),
    })),
    warnings: scan.warnings.map((w) => ({ ...w, file: tilde(w.file, home) })),
    watchedPaths: scan.watchedPaths.map((p) => tilde(p, home)),
  };
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The lines of `agent scan`. */
export function scanTable(scan: ScanResult, home: string): string[] {
  if (scan.clients.length === 0) return ['No AI client configuration found.'];
  const rows = [['CLIENT', 'SCOPE', 'SERVER', 'TRANSPORT', 'ENABLED', 'SOURCE', 'NOTE']];
  for (const client of scan.clients) {
    if (client.servers.length === 0) rows.push([client.displayName, '-', '(no MCP servers)', '', '', '', '']);
    for (const s of client.servers) {
      const where = s.project ? ` (${tilde(s.project, home)})` : '';
      const notes = [
        s.disabledBy ? `off: ${s.disabledBy}` : '',
        s.proxied ? 'through mcp-proxy' : '',
        ...s.overriddenBy.map(
          (o) => `overridden by ${o.scope}${o.project ? ` in ${tilde(o.project, home)}` : ''}`,
        ),
      ].filter(Boolean);
      rows.push([
        client.displayName,
        `${s.scope}${where}`,
        s.name,
        s.transport,
        s.enabled ? 'yes' : 'no',
        mcpSourceText(s.source),
        notes.join('; '),
      ]);
    }
  }
  const lines = table(rows);
  lines.push('');
  for (const client of scan.clients) {
    const proxied = client.servers.filter((s) => s.proxied).map((s) => s.name);
    const through = proxied.length ? `; through mcp-proxy: ${[...new Set(proxied)].join(', ')}` : '';
    lines.push(
      client.capture === 'hooks'
        ? `${client.displayName}: tool calls can be captured (through its hooks: agent hooks install)${through}`
        : proxied.length
          ? `${client.displayName}: tool calls of ${[...new Set(proxied)].join(', ')} are captured through mcp-proxy; its other servers' are not (agent hooks install --proxy NAME)`
          : `${client.displayName}: tool calls cannot be captured (the client has no hooks the agent can use; a stdio server can be opted in: agent hooks install --proxy NAME)`,
    );
  }
  return lines;
}

export const warningLine = (w: ScanResult['warnings'][number], home: string) =>
  `warning: ${tilde(w.file, home)}${w.line ? `:${w.line}${w.column ? `:${w.column}` : ''}` : ''}: ${w.message}`;
