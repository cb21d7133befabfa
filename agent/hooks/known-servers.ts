// The MCP server names configured for each client, kept in the state directory so that the hook can split a tool
// name whose server part contains the separator (`mcp__my__server__tool`) without reading the client's config on
// every call. Whatever scans the configs (`agent scan`, the daemon) saves them here.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScanResult } from '../discovery/types.ts';
import { hookClient } from './clients/index.ts';
import { saveServerSources } from './policy.ts';

const path = (stateDir: string): string => join(stateDir, 'hooks', 'known-servers.json');

function readAll(stateDir: string): Record<string, string[]> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path(stateDir), 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string[]>) : {};
  } catch {
    return {};
  }
}

export function knownServers(stateDir: string, clientId: string): string[] {
  const names = readAll(stateDir)[clientId];
  return Array.isArray(names) ? names.filter((name): name is string => typeof name === 'string') : [];
}

export function saveKnownServers(stateDir: string, clientId: string, names: readonly string[]): void {
  const all = readAll(stateDir);
  all[clientId] = [...new Set(names)].sort();
  mkdirSync(join(stateDir, 'hooks'), { recursive: true, mode: 0o700 });
  const tmp = `${path(stateDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path(stateDir));
}

/**
 * Keeps the server names of every client with hooks that a scan found (what `agent scan`, `inventory` and the daemon
 * do), and each server's source identity, which policy rules on a source match (docs/policy.md).
 */
export function saveScannedServers(stateDir: string, scan: Pick<ScanResult, 'clients'>): void {
  for (const client of scan.clients) {
    if (!hookClient(client.agentType)) continue;
    saveKnownServers(
      stateDir,
      client.agentType,
      client.servers.map((s) => s.name),
    );
    saveServerSources(
      stateDir,
      client.agentType,
      Object.fromEntries(client.servers.map((s) => [s.name, `${s.source.type}:${s.source.name}`])),
    );
  }
}
