// What the hook command works with: a client's hook payload read into one observed MCP tool call, the decision
// taken on it, and the answer in the client's own format. One HookClient per client with a hook system.

/** A payload as the client sent it: a JSON object, its fields unchecked until read. */
export type Payload = Record<string, unknown>;

/** The server of a call whose payload does not say which (an older Cursor's afterMCPExecution). */
export const UNKNOWN_SERVER = 'unknown';

/** One MCP tool call seen through a client's hook, before (`pre`) or after (`post`) it ran. */
export interface ObservedCall {
  phase: 'pre' | 'post';
  server: string;
  tool: string;
  /** What pairs the pre and the post of one call: the client's tool-use id when it has one. */
  pairKey: string;
  sessionId?: string;
  model?: string;
  actorEmail?: string;
  /** post: what the tool reported when it failed. */
  error?: string;
  /** post: the run time the client measured, when it reports one. */
  durationMs?: number;
  input?: unknown;
  output?: unknown;
  /** The client's name for the event (PreToolUse, afterMCPExecution, …). */
  clientEvent: string;
  /** Other facts worth keeping in the event's metadata (the subagent that made the call). */
  extra?: Record<string, string>;
}

/** A session starting: what it says about the session that tool calls do not (Claude Code names the model). */
export interface ObservedSession {
  phase: 'session';
  sessionId: string;
  model?: string;
}

/**
 * The policy's answer on a call. An allow names the rule that allowed it (`<rule id>@<version>`, absent when no
 * policy applied), an audit-mode deny rule it matched on the way (reported as would-deny), and whether the device
 * had no usable policy.
 */
export type Decision =
  | { kind: 'allow'; rule?: string; audit?: { rule: string; reason: string }; noCache?: boolean }
  | { kind: 'deny'; code: string; reason: string; rule: string };

/** What the hook process prints and how it exits. */
export interface HookAnswer {
  stdout: string;
  stderr?: string;
  exitCode: number;
}

export interface ReadContext {
  /** The MCP server names configured for this client, when known (known-servers.ts). */
  knownServers(): readonly string[];
}

/** Where a client keeps its settings, for the install (home, platform and environment of the machine). */
export interface HookEnv {
  home: string;
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
}

export interface HookEventSpec {
  event: string;
  /** Which tools the entry applies to, in the client's matcher syntax; absent: every occurrence. */
  matcher?: string;
}

export interface InstallSpec {
  /** The directory whose presence means the client is set up for this user. */
  userDir(env: HookEnv): string;
  userFile(env: HookEnv): string;
  /** The machine-wide file an MDM deploys, when the client documents one. */
  managedFile?(env: HookEnv): string;
  /** Why managed install is not written, when it is not. */
  managedNote?: string;
  /** `groups`: {matcher, hooks: [handler]} per event (Claude Code, Codex, Gemini CLI); `flat`: handlers per event. */
  layout: 'groups' | 'flat';
  events: readonly HookEventSpec[];
  /** The handler object for one command. */
  handler(command: string): Record<string, unknown>;
  /** Top-level keys the file must have (Cursor's `"version": 1`). */
  required?: Readonly<Record<string, unknown>>;
  /** What the user must still do after install, if anything. */
  note?: string;
}

export interface HookClient {
  id: string;
  /** `agent_type` on the wire. */
  agentType: string;
  /** The event's phase for this client; undefined: not an event the agent handles. */
  phase(event: string): 'pre' | 'post' | 'session' | undefined;
  read(payload: Payload, event: string, context: ReadContext): ObservedCall | ObservedSession | undefined;
  /** The decision in the client's documented format, for an event of the given phase. */
  answer(decision: Decision, event: string): HookAnswer;
  install: InstallSpec;
}
