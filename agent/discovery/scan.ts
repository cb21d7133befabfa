// Discovery: the AI clients on this machine and the MCP servers each is configured with (`agent scan`), and the
// inventory report made of it (`agent inventory`, the daemon). Nothing here sends anything: inventoryReport builds
// the body, and what it holds is all that leaves the laptop (docs/endpoint-agent.md, "What is sent").
//
// Where projects are found: the projects the clients record (Claude Code's `projects` in ~/.claude.json, Codex's
// trusted `[projects]`), plus the directories given in `projectDirs` (the agent's settings, `--project`).
import { posix, win32 } from 'node:path';
import type { AgentReport } from '../client.ts';
import { CLIENTS } from '../clients/index.ts';
import { captureSupport } from '../hooks/capture-support.ts';
import { wrappedServer } from '../proxy/command-line.ts';
import type { ToolHash } from '../proxy/tool-hashes.ts';
import { AGENT_VERSION } from '../version.ts';
import { configFingerprint } from './fingerprint.ts';
import { type ReadOutcome, readConfig } from './read-config.ts';
import { sourceOf } from './source-identity.ts';
import type {
  ClientModule,
  ClientScan,
  ConfigFile,
  DiscoveredServer,
  ScanContext,
  ScanResult,
  ScanWarning,
  ServerEntry,
} from './types.ts';

export type { ClientScan, DiscoveredServer, ScanResult, ScanWarning } from './types.ts';

export interface ScanOptions {
  home: string;
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  /** Project directories to look in besides those the clients record. */
  projectDirs?: readonly string[];
  /** The clients to look for (default: all of agent/clients). */
  clients?: readonly ClientModule[];
  /** Where system-wide paths (/etc, /Library) are read from (tests); default `/`. */
  systemRoot?: string;
}

/** At most this many projects are looked in (the most a laptop plausibly has; past it the scan says so). */
export const MAX_PROJECTS = 5_000;
/** Files read at once. */
const READ_CONCURRENCY = 64;

class Reader {
  readonly outcomes = new Map<string, ReadOutcome>();
  async readAll(files: readonly ConfigFile[]): Promise<void> {
    const queue = [
      ...new Map(files.filter((f) => !this.outcomes.has(f.path)).map((f) => [f.path, f])).values(),
    ];
    const next = async (): Promise<void> => {
      for (let file = queue.pop(); file; file = queue.pop()) {
        this.outcomes.set(file.path, await readConfig(file));
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, queue.length) }, next));
  }
  documents(): Map<string, unknown> {
    const docs = new Map<string, unknown>();
    for (const [path, outcome] of this.outcomes)
      if (outcome.state === 'read') docs.set(path, outcome.document);
    return docs;
  }
}

function dedupe<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

/**
 * An entry that runs its server through the agent's MCP proxy, as the server's own entry: its source identity and
 * fingerprint are those of the command the proxy runs, so that opting a server in or out changes neither.
 */
function unwrapProxy(entry: ServerEntry): ServerEntry {
  const wrapped = wrappedServer(entry.args);
  if (!wrapped || entry.transport !== 'stdio') return entry;
  const config: Record<string, unknown> = { ...entry.config, command: wrapped.command, args: wrapped.args };
  if (!wrapped.args.length) delete config.args;
  return { ...entry, config, command: wrapped.command, args: wrapped.args, proxied: true };
}

/** Marks, per name, the entries the client uses instead of another wherever both apply (same project or global). */
function withPrecedence(client: ClientModule, servers: DiscoveredServer[]): DiscoveredServer[] {
  const rank = (scope: string) => client.precedence.indexOf(scope);
  for (const a of servers) {
    for (const b of servers) {
      if (a === b || a.name !== b.name || rank(a.scope) === -1 || rank(b.scope) === -1) continue;
      if (rank(b.scope) >= rank(a.scope)) continue;
      if (a.project !== undefined && b.project !== undefined && a.project !== b.project) continue;
      a.overriddenBy.push(
        b.project === undefined ? { scope: b.scope } : { scope: b.scope, project: b.project },
      );
    }
  }
  return servers;
}

/**
 * Scans a machine: every client of `clients` with at least one config file, its servers, the warnings (a file
 * that cannot be read or parsed: the file and line) and every path the daemon should watch.
 */
export async function scanMachine(options: ScanOptions): Promise<ScanResult> {
  const clients = options.clients ?? CLIENTS;
  const base: ScanContext = {
    home: options.home,
    platform: options.platform,
    env: options.env,
    projectDirs: [],
    ...(options.systemRoot ? { systemRoot: options.systemRoot } : {}),
  };
  const reader = new Reader();
  await reader.readAll(clients.flatMap((c) => c.recordFiles?.(base) ?? []));
  const recorded = reader.documents();
  const isAbsolute = (options.platform === 'win32' ? win32 : posix).isAbsolute;
  const warnings: ScanWarning[] = [];
  let projectDirs = dedupe([
    ...clients.flatMap((c) => c.projects?.(recorded, base) ?? []),
    ...(options.projectDirs ?? []),
  ]).filter((dir) => dir && isAbsolute(dir));
  if (projectDirs.length > MAX_PROJECTS) {
    warnings.push({
      file: options.home,
      message: `${projectDirs.length} projects recorded: only the first ${MAX_PROJECTS} were looked in`,
    });
    projectDirs = projectDirs.slice(0, MAX_PROJECTS);
  }
  const ctx: ScanContext = { ...base, projectDirs };
  const filesOf = new Map(clients.map((c) => [c, c.files(ctx)]));
  await reader.readAll([...filesOf.values()].flat());
  const docs = reader.documents();
  for (const outcome of reader.outcomes.values())
    if (outcome.state === 'failed') warnings.push(outcome.warning);

  const scans: ClientScan[] = [];
  for (const client of clients) {
    const files = dedupe((filesOf.get(client) ?? []).map((f) => f.path)).filter(
      (path) => reader.outcomes.get(path)?.state !== 'absent',
    );
    if (files.length === 0) continue;
    const servers = client
      .servers(docs, ctx)
      .map(unwrapProxy)
      .map(
        (entry): DiscoveredServer => ({
          ...entry,
          source: entry.source ?? sourceOf(entry),
          overriddenBy: [],
        }),
      );
    const version = client.version?.(docs, ctx);
    scans.push({
      agentType: client.agentType,
      displayName: client.displayName,
      capture: captureSupport(client.agentType),
      ...(version ? { version } : {}),
      files,
      servers: withPrecedence(client, servers),
    });
  }
  return { clients: scans, warnings, watchedPaths: dedupe([...filesOf.values()].flat().map((f) => f.path)) };
}

/** What POST /v1/devices/inventory takes besides the certificate and the timestamp the client adds. */
export interface InventoryBody {
  agentVersion: string;
  agents: AgentReport[];
}

/** The inventory's bounds (shared/devices/schemas.ts): the report stays inside them rather than being refused. */
export const REPORT_LIMITS = { agents: 200, mcpsPerAgent: 500, name: 200, toolsPerMcp: 1000 } as const;

/**
 * The inventory body of a scan: per client its servers' name, transport, enabled, scope, source identity and
 * fingerprint, and for a proxied server its tools' definition hashes, and nothing else of their entries. The same name, scope and fingerprint found in several projects
 * is one server (enabled if it is anywhere). A name too long for the inventory is left out.
 */
export function inventoryReport(
  scan: ScanResult,
  fingerprintKey: Buffer,
  /** The tool hashes the proxy saw for a proxied server of a client (proxy/tool-hashes.ts). */
  toolHashes: (agentType: string, server: string) => ToolHash[] | undefined = () => undefined,
): InventoryBody {
  const agents = scan.clients.slice(0, REPORT_LIMITS.agents).map((client): AgentReport => {
    const mcps = new Map<string, NonNullable<AgentReport['mcps']>[number]>();
    for (const server of client.servers) {
      if (server.name.length > REPORT_LIMITS.name) continue;
      const fingerprint = configFingerprint(fingerprintKey, server.name, server.config);
      const key = JSON.stringify([server.name, server.scope, fingerprint]);
      const seen = mcps.get(key);
      if (seen) {
        seen.enabled ||= server.enabled;
        continue;
      }
      const tools = server.proxied ? toolHashes(client.agentType, server.name) : undefined;
      mcps.set(key, {
        name: server.name,
        transport: server.transport,
        enabled: server.enabled,
        scope: server.scope,
        source: server.source,
        fingerprint,
        ...(tools ? { tools: tools.slice(0, REPORT_LIMITS.toolsPerMcp) } : {}),
      });
    }
    return {
      agentType: client.agentType,
      displayName: client.displayName,
      capture: client.capture,
      ...(client.version ? { version: client.version } : {}),
      mcps: [...mcps.values()].slice(0, REPORT_LIMITS.mcpsPerAgent),
    };
  });
  return { agentVersion: AGENT_VERSION, agents };
}
