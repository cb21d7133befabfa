// What discovery works with: the machine it looks at, the config files each AI client reads, and what it found.

/** The machine as discovery sees it: injected, so that a test scans a fixture home as if it were a laptop's. */
export interface ScanContext {
  home: string;
  platform: NodeJS.Platform;
  /** The environment that moves config dirs: APPDATA, XDG_CONFIG_HOME, CODEX_HOME, PROGRAMDATA, ... */
  env: Readonly<Record<string, string | undefined>>;
  /** Project directories to look in for project-scoped configs (from the clients' records and the settings). */
  projectDirs: readonly string[];
  /** Where the system-wide paths of macOS and Linux (/etc, /Library) are read from: `/` but in tests. */
  systemRoot?: string;
}

export type ConfigFormat = 'jsonc' | 'toml';

/** A file a client reads. Discovery reads each once per scan; the daemon watches all of them. */
export interface ConfigFile {
  path: string;
  format: ConfigFormat;
}

/** The parsed documents of a scan, by path: a file that is absent, unreadable or malformed has none. */
export type Documents = ReadonlyMap<string, unknown>;

export type Transport = 'stdio' | 'http' | 'sse';

/** One MCP server entry as a client's config holds it: `config` is the whole entry, secrets included (never sent). */
export interface ServerEntry {
  name: string;
  /** Where the client keeps it, in the client's words: user, project, local, managed, workspace, system, ... */
  scope: string;
  /** The file it is in. */
  file: string;
  /** The project it belongs to (project-bound scopes): a local path, never sent. */
  project?: string;
  config: Record<string, unknown>;
  transport: Transport;
  command?: string;
  args?: readonly string[];
  url?: string;
  enabled: boolean;
  /** Why it is disabled, in the client's terms (e.g. `disabled: true`, `disabledMcpjsonServers`). */
  disabledBy?: string;
  /** Set by a client whose entry names no command or URL (a server its own extension starts). */
  source?: SourceIdentity;
  /** The entry runs the server through the agent's MCP proxy (`command` and `args` are then the server's own). */
  proxied?: boolean;
}

export interface SourceIdentity {
  type: 'npm' | 'pypi' | 'oci' | 'executable' | 'remote';
  name: string;
  version?: string;
}

/** A found server: the entry's facts, its source identity, and whether another definition wins over it. */
export interface DiscoveredServer extends Omit<ServerEntry, 'source'> {
  source: SourceIdentity;
  /** Entries of the same name that the client uses instead of this one wherever both apply (empty: in use). */
  overriddenBy: Array<{ scope: string; project?: string }>;
}

export interface ScanWarning {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

export interface ClientScan {
  agentType: string;
  displayName: string;
  /** Whether the agent can capture this client's tool calls (its hooks); `none` when it cannot. */
  capture: 'hooks' | 'none';
  /** The client's version where its config reveals it. */
  version?: string;
  /** The config files that exist (a client with none is not on this machine). */
  files: string[];
  servers: DiscoveredServer[];
}

export interface ScanResult {
  clients: ClientScan[];
  warnings: ScanWarning[];
  /** Every config file the clients read, present or not: the daemon reports again when one changes. */
  watchedPaths: string[];
}

/**
 * One AI client: where it keeps its MCP servers on each OS and how to read them. Adding a client is one module
 * that implements this, listed in agent/clients/index.ts, plus its fixtures. Whether its tool calls can be captured
 * is the hooks feature's answer (captureSupport, agent/hooks).
 */
export interface ClientModule {
  agentType: string;
  displayName: string;
  /**
   * Scopes from the one the client prefers to the one it uses last when a name is defined in several; a scope
   * missing from the list never overrides nor is overridden.
   */
  precedence: readonly string[];
  /** Every file it may read on this machine, in reading order. */
  files(ctx: ScanContext): ConfigFile[];
  /** Its server entries, from the documents that were read. */
  servers(docs: Documents, ctx: ScanContext): ServerEntry[];
  /** Its version, when a document records it. */
  version?(docs: Documents, ctx: ScanContext): string | undefined;
  /** Projects it records (e.g. Claude Code's `projects`), read before the project files are located. */
  projects?(docs: Documents, ctx: ScanContext): string[];
  /** The files it reads before the project files are known (those projects() looks in). */
  recordFiles?(ctx: ScanContext): ConfigFile[];
}
