// The MCP proxy's core: JSON-RPC over stdio (one message per line, MCP's stdio transport) between a client and the
// server it wraps. Every line goes on as the bytes it arrived as; only three kinds are read:
// - `tools/call` requests: decided by the hooks' decision function (hooks/decide.ts). A denied call never reaches the
//   server: the proxy answers it as a tool execution error (`result.isError: true`, the reason as text), the form
//   MCP documents for a failure the model should read, and records it as denied. An allowed one is recorded when its
//   response or error comes back (matched by id), or when the client cancels it;
// - `tools/list` responses: each tool's definition hashed (tool-hashes.ts), for the inventory;
// - `notifications/cancelled`: passed on, and the cancelled call recorded as started without outcome.
// Whatever fails in that reading is logged and the line is passed on: the proxy never breaks the conversation.
import { ALLOW, decide as defaultDecide } from '../hooks/decide.ts';
import { logHookError } from '../hooks/error-log.ts';
import { toolCallEvent } from '../hooks/event.ts';
import { type DecideContext, policyFacts } from '../hooks/policy.ts';
import { type AgentSettings, readSettings } from '../hooks/settings.ts';
import type { Decision, ObservedCall } from '../hooks/types.ts';
import { openSpool, type Spool } from '../spool/spool.ts';
import { saveToolHashes, type ToolHash, toolDefinitionHash } from './tool-hashes.ts';

export interface ProxyOptions {
  stateDir: string;
  /** The client whose config runs the proxy: the events' agent_type. */
  clientId: string;
  /** The server's name in that config: the events' mcp_name. */
  server: string;
  /** The server's source identity (`<type>:<name>`), for the policy's source rules and the events. */
  source?: string;
  decide?: (call: ObservedCall, context: DecideContext) => Decision;
  now?: () => number;
}

/** A sink that takes a whole buffer; false asks the sender to wait for drain (a stream's write). */
export type Sink = (bytes: Buffer) => boolean | undefined;

interface PendingCall {
  tool: string;
  startedAt: number;
  startedHr: number;
  decision: Decision;
  /** The device's settings as the call started: its event is written with them. */
  settings: AgentSettings;
  input?: unknown;
}

const NEWLINE = 0x0a;
// Substrings a line must hold to be worth parsing (JSON escapes cannot hide them: `/` and letters are never escaped
// by the serializers clients use, and a line that escapes them anyway is passed on unread).
const CLIENT_MARKERS = ['tools/call', 'tools/list', 'notifications/cancelled'].map((m) => Buffer.from(m));

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const idKey = (id: unknown): string | undefined =>
  typeof id === 'string' || typeof id === 'number' ? JSON.stringify(id) : undefined;

/** Splits a byte stream into lines, each with its newline, keeping a partial last line for the next chunk. */
class LineSplitter {
  private partial: Buffer[] = [];
  /** Bytes up to the next newline are the tail of a line that went on unread: they are not a line of their own. */
  private skipping = false;
  get idle(): boolean {
    return this.partial.length === 0 && !this.skipping;
  }
  push(chunk: Buffer, line: (bytes: Buffer) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl + 1);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      if (this.partial.length) {
        this.partial.push(piece);
        line(Buffer.concat(this.partial));
        this.partial = [];
      } else line(piece);
    }
    if (start < chunk.length && !this.skipping) this.partial.push(chunk.subarray(start));
  }
  /** A chunk that went on unread: only where its last line ends matters. */
  skip(chunk: Buffer): void {
    if (chunk.length && chunk[chunk.length - 1] !== NEWLINE) this.skipping = true;
  }
  /** What is left without a newline at the end of the stream. */
  rest(): Buffer | undefined {
    if (!this.partial.length) return undefined;
    const rest = Buffer.concat(this.partial);
    this.partial = [];
    return rest;
  }
}

export class McpProxy {
  private readonly options: ProxyOptions;
  private readonly toServer: Sink;
  private readonly toClient: Sink;
  private readonly fromClientLines = new LineSplitter();
  private readonly fromServerLines = new LineSplitter();
  private readonly calls = new Map<string, PendingCall>();
  /** tools/list requests awaiting their response: whether each continues a listing (a cursor) or starts one. */
  private readonly lists = new Map<string, { continued: boolean }>();
  private listed = new Map<string, ToolHash>();
  private readonly now: () => number;
  /** Opened once: the proxy lives as long as the client's session, and appends one event per call. */
  private spool: Spool | undefined;

  constructor(options: ProxyOptions, toServer: Sink, toClient: Sink) {
    this.options = options;
    this.toServer = toServer;
    this.toClient = toClient;
    this.now = options.now ?? Date.now;
  }

  /** Bytes from the client; returns false when the server's side asks to wait. */
  fromClient(chunk: Buffer): boolean {
    let ready = true;
    const out: Buffer[] = [];
    this.fromClientLines.push(chunk, (line) => {
      if (!CLIENT_MARKERS.some((m) => line.includes(m))) {
        out.push(line);
        return;
      }
      const answer = this.guard(() => this.clientMessage(line), undefined);
      if (answer === undefined) out.push(line);
      else if (answer.forward) out.push(answer.forward);
      if (answer?.reply) ready = this.toClient(answer.reply) !== false && ready;
    });
    if (out.length)
      ready = this.toServer(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out)) !== false && ready;
    return ready;
  }

  /**
   * Bytes from the server: passed on at once, as they came; read only while a call or a listing awaits its answer.
   * Returns false when the client's side asks to wait.
   */
  fromServer(chunk: Buffer): boolean {
    const ready = this.toClient(chunk) !== false;
    if (this.calls.size === 0 && this.lists.size === 0 && this.fromServerLines.idle)
      this.fromServerLines.skip(chunk);
    else
      this.fromServerLines.push(chunk, (line) => {
        if (this.calls.size || this.lists.size) this.guard(() => this.serverMessage(line), undefined);
      });
    return ready;
  }

  /** The client's stream ended: what it sent without a final newline still goes to the server. */
  clientEnded(): void {
    const rest = this.fromClientLines.rest();
    if (rest) this.toServer(rest);
  }

  /** The server exited: its unanswered calls are errors. */
  serverExited(): void {
    for (const [key, call] of this.calls) {
      this.calls.delete(key);
      this.record(call, 'error', { error: 'the MCP server exited before answering' });
    }
  }

  private guard<T>(work: () => T, fallback: T): T {
    try {
      return work();
    } catch (err) {
      logHookError(this.options.stateDir, `mcp-proxy ${this.options.clientId}`, (err as Error).message);
      return fallback;
    }
  }

  /** A client's line that may matter: undefined to pass it on as it is; else what to send each way instead. */
  private clientMessage(line: Buffer): { forward?: Buffer; reply?: Buffer } | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line.toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed)) {
      const reply = this.clientRequest(parsed);
      return reply ? { reply } : undefined;
    }
    // A JSON-RPC batch (MCP 2025-03-26): its denied calls are answered here, the rest goes on as a smaller batch.
    const kept: unknown[] = [];
    const replies: Buffer[] = [];
    for (const message of parsed) {
      const reply = this.clientRequest(message);
      if (reply) replies.push(reply);
      else kept.push(message);
    }
    if (!replies.length) return undefined;
    return {
      ...(kept.length ? { forward: Buffer.from(`${JSON.stringify(kept)}\n`) } : { forward: Buffer.alloc(0) }),
      reply: Buffer.concat(replies),
    };
  }

  /** Reads one message from the client; returns the proxy's own answer when it refuses a call. */
  private clientRequest(message: unknown): Buffer | undefined {
    if (!isObject(message)) return undefined;
    const key = idKey(message.id);
    const params = isObject(message.params) ? message.params : {};
    if (message.method === 'notifications/cancelled') {
      const cancelled = idKey(params.requestId);
      const call = cancelled === undefined ? undefined : this.calls.get(cancelled);
      if (cancelled !== undefined && call) {
        this.calls.delete(cancelled);
        this.record(call, 'invocation', { cancelled: true });
      }
      return undefined;
    }
    if (key === undefined) return undefined;
    if (message.method === 'tools/list') {
      this.lists.set(key, { continued: params.cursor !== undefined });
      return undefined;
    }
    if (message.method !== 'tools/call' || typeof params.name !== 'string') return undefined;
    const tool = params.name;
    const { settings, problems } = readSettings(this.options.stateDir);
    for (const problem of problems) logHookError(this.options.stateDir, 'settings', problem);
    const startedAt = this.now();
    const decision = (this.options.decide ?? defaultDecide)(
      { phase: 'pre', server: this.options.server, tool, pairKey: key, clientEvent: 'tools/call' },
      {
        stateDir: this.options.stateDir,
        clientId: this.options.clientId,
        agentType: this.options.clientId,
        settings,
        now: startedAt,
        ...(this.options.source ? { source: this.options.source } : {}),
      },
    );
    const call: PendingCall = {
      tool,
      startedAt,
      startedHr: performance.now(),
      decision,
      settings,
      ...(params.arguments === undefined ? {} : { input: params.arguments }),
    };
    if (decision.kind === 'deny') {
      this.record(call, 'result', {});
      const answer = {
        jsonrpc: '2.0',
        id: message.id,
        result: { content: [{ type: 'text', text: decision.reason }], isError: true },
      };
      return Buffer.from(`${JSON.stringify(answer)}\n`);
    }
    this.calls.set(key, call);
    return undefined;
  }

  /** Reads one message from the server when it may answer a pending call or listing. */
  private serverMessage(line: Buffer): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line.toString('utf8'));
    } catch {
      return;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (!isObject(message) || message.method !== undefined) continue;
      const key = idKey(message.id);
      if (key === undefined) continue;
      const call = this.calls.get(key);
      if (call) {
        this.calls.delete(key);
        this.answered(call, message);
        continue;
      }
      const list = this.lists.get(key);
      if (list) {
        this.lists.delete(key);
        this.listedTools(list.continued, message.result);
      }
    }
  }

  private answered(call: PendingCall, message: Json): void {
    const durationMs = performance.now() - call.startedHr;
    if (isObject(message.error)) {
      const text = typeof message.error.message === 'string' ? message.error.message : 'JSON-RPC error';
      this.record(call, 'error', { durationMs, error: text, output: message.error });
      return;
    }
    const result = isObject(message.result) ? message.result : {};
    if (result.isError === true) {
      const first = Array.isArray(result.content) ? result.content[0] : undefined;
      const text =
        isObject(first) && typeof first.text === 'string' ? first.text : 'the tool reported an error';
      this.record(call, 'error', { durationMs, error: text, output: result.content });
      return;
    }
    this.record(call, 'result', { durationMs, output: result.content ?? result.structuredContent });
  }

  private listedTools(continued: boolean, result: unknown): void {
    if (!isObject(result) || !Array.isArray(result.tools)) return;
    if (!continued) this.listed = new Map();
    for (const tool of result.tools) {
      const hashed = toolDefinitionHash(tool);
      if (hashed) this.listed.set(hashed.name, hashed);
    }
    const { stateDir, clientId, server } = this.options;
    saveToolHashes(stateDir, clientId, server, [...this.listed.values()], this.now());
  }

  private record(
    call: PendingCall,
    outcome: 'result' | 'error' | 'invocation',
    facts: { durationMs?: number; error?: string; output?: unknown; cancelled?: boolean },
  ): void {
    const { stateDir, clientId, server, source } = this.options;
    const { settings } = call;
    const event = toolCallEvent(
      {
        agentType: clientId,
        server,
        tool: call.tool,
        eventTime: call.startedAt,
        outcome,
        decision: call.decision ?? ALLOW,
        input: call.input,
        output: facts.output,
        metadata: {
          source: 'proxy',
          ...(facts.cancelled ? { cancelled: true } : {}),
          ...policyFacts(settings, source),
        },
        ...(settings.group ? { group: settings.group } : {}),
        ...(settings.actorEmail ? { actorEmail: settings.actorEmail } : {}),
        ...(facts.error === undefined ? {} : { error: facts.error }),
        ...(facts.durationMs === undefined ? {} : { durationMs: facts.durationMs }),
      },
      settings.capture,
    );
    this.spool ??= openSpool(stateDir, { maxBytes: settings.spool.maxBytes });
    this.spool.append(event);
  }
}
