// What the proxy learns from `tools/list`: one SHA-256 per tool over the RFC 8785 canonical JSON of its name,
// description and input schema, kept per (client, server) in the state directory for the inventory. Only the hashes
// are kept and reported, never a definition's text (docs/policy.md, "Tool definition hashes").
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalize } from '#shared/core/canonical-json.ts';
import type { ScanResult } from '../discovery/types.ts';

export interface ToolHash {
  name: string;
  /** 64 lowercase hex characters. */
  hash: string;
}

/** The hash of one tool of a tools/list result; undefined when the entry is not a tool (no string name). */
export function toolDefinitionHash(tool: unknown): ToolHash | undefined {
  if (typeof tool !== 'object' || tool === null) return undefined;
  const { name, description, inputSchema } = tool as Record<string, unknown>;
  if (typeof name !== 'string') return undefined;
  const covered = { name, description, inputSchema };
  return { name, hash: createHash('sha256').update(canonicalize(covered)).digest('hex') };
}

/** One file per client and server: proxies of different servers never write the same file. */
export function toolHashesPath(stateDir: string, clientId: string, server: string): string {
  const key = createHash('sha256')
    .update(JSON.stringify([clientId, server]))
    .digest('hex')
    .slice(0, 32);
  return join(stateDir, 'proxy', 'tools', `${key}.json`);
}

interface Saved {
  client: string;
  server: string;
  seenAt: string;
  tools: ToolHash[];
}

export function saveToolHashes(
  stateDir: string,
  clientId: string,
  server: string,
  tools: readonly ToolHash[],
  now: number,
): void {
  const path = toolHashesPath(stateDir, clientId, server);
  mkdirSync(join(stateDir, 'proxy', 'tools'), { recursive: true, mode: 0o700 });
  const saved: Saved = {
    client: clientId,
    server,
    seenAt: new Date(now).toISOString(),
    tools: [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The hashes the proxy last saw for this server of this client, or undefined when it never listed them. */
export function readToolHashes(stateDir: string, clientId: string, server: string): ToolHash[] | undefined {
  try {
    const saved = JSON.parse(
      readFileSync(toolHashesPath(stateDir, clientId, server), 'utf8'),
    ) as Partial<Saved>;
    if (saved.client !== clientId || saved.server !== server || !Array.isArray(saved.tools)) return undefined;
    return saved.tools.filter(
      (t): t is ToolHash => typeof t?.name === 'string' && typeof t.hash === 'string' && HEX64.test(t.hash),
    );
  } catch {
    return undefined;
  }
}

/** For the inventory: the hash files of a scan's proxied servers, and a reader of them. */
export function proxiedToolSources(
  stateDir: string,
  scan: Pick<ScanResult, 'clients'>,
): { paths: string[]; read: (agentType: string, server: string) => ToolHash[] | undefined } {
  const paths = scan.clients.flatMap((client) =>
    client.servers.filter((s) => s.proxied).map((s) => toolHashesPath(stateDir, client.agentType, s.name)),
  );
  return {
    paths: [...new Set(paths)],
    read: (agentType, server) => readToolHashes(stateDir, agentType, server),
  };
}
