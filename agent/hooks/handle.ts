// One hook call: the client's payload read as an MCP tool call, decided, recorded (a start in the pending store, an
// end as an event in the spool), answered in the client's format. Whatever fails inside is logged and answered as
// "allow": the hook never breaks the developer's tool call. It never touches the network.
import { openSpool, type SpoolOptions } from '../spool/spool.ts';
import { hookClient } from './clients/index.ts';
import { ALLOW, decide as defaultDecide } from './decide.ts';
import { logHookError } from './error-log.ts';
import { toolCallEvent } from './event.ts';
import { knownServers } from './known-servers.ts';
import { obj } from './payload.ts';
import { PendingCalls, SessionNotes } from './pending.ts';
import { type DecideContext, policyFacts, serverSource } from './policy.ts';
import { type AgentSettings, readSettings } from './settings.ts';
import {
  type Decision,
  type HookAnswer,
  type HookClient,
  type ObservedCall,
  UNKNOWN_SERVER,
} from './types.ts';

export interface HookRequest {
  clientId: string;
  event: string;
  stateDir: string;
  /** The payload as the client wrote it on stdin. */
  stdin: string;
  now?: number;
}

export interface HookOptions {
  decide?: (call: ObservedCall, context: DecideContext) => Decision;
  /** A start with no end after this long is reported as an invocation without outcome. */
  pendingTtlMs?: number;
  spool?: Omit<SpoolOptions, 'maxBytes'>;
}

const HOUR = 3_600_000;

export function handleHook(request: HookRequest, options: HookOptions = {}): HookAnswer {
  const client = hookClient(request.clientId);
  if (!client) {
    logHookError(request.stateDir, `hook --client ${request.clientId}`, 'not a client the agent knows');
    return { stdout: '', exitCode: 0 };
  }
  let decision: Decision = ALLOW;
  try {
    decision = observe(client, request, options);
  } catch (err) {
    logHookError(request.stateDir, `${client.id} ${request.event}`, (err as Error).message);
    decision = ALLOW;
  }
  try {
    return client.answer(decision, request.event);
  } catch {
    return client.answer(ALLOW, request.event);
  }
}

function observe(client: HookClient, request: HookRequest, options: HookOptions): Decision {
  const { stateDir, event } = request;
  const now = request.now ?? Date.now();
  let payload: unknown;
  try {
    payload = JSON.parse(request.stdin);
  } catch {
    // Not the parser's message: it quotes the payload, which may hold secrets.
    throw new Error(`the payload is not valid JSON (${Buffer.byteLength(request.stdin)} bytes)`);
  }
  const fields = obj(payload);
  if (!fields) throw new Error('the payload is not a JSON object');
  let known: readonly string[] | undefined;
  const observed = client.read(fields, event, {
    knownServers: () => {
      known ??= knownServers(stateDir, client.id);
      return known;
    },
  });
  if (!observed) return ALLOW;
  const { settings, problems } = readSettings(stateDir);
  for (const problem of problems) logHookError(stateDir, 'settings', problem);
  if (observed.phase === 'session') {
    if (observed.model)
      new SessionNotes(stateDir).save(client.id, observed.sessionId, { model: observed.model });
    return ALLOW;
  }
  const recorder = new Recorder(client, stateDir, settings, options);
  if (observed.phase === 'pre') {
    const decision = (options.decide ?? defaultDecide)(observed, {
      stateDir,
      clientId: client.id,
      agentType: client.agentType,
      settings,
      now,
    });
    if (decision.kind === 'deny') recorder.record(observed, { eventTime: now, outcome: 'result', decision });
    else recorder.start(observed, now, decision);
    recorder.reportExpired(now - (options.pendingTtlMs ?? HOUR));
    return decision;
  }
  const started = recorder.pending.take(client.id, observed.pairKey);
  // What the start knew and the end does not say (Cursor names the server's URL only before the call).
  if (started && observed.server === UNKNOWN_SERVER) observed.server = started.server;
  const durationMs = observed.durationMs ?? (started ? now - started.startedAt : undefined);
  recorder.record(observed, {
    eventTime: started?.startedAt ?? now - (observed.durationMs ?? 0),
    outcome: observed.error === undefined ? 'result' : 'error',
    decision: started?.decision ?? ALLOW,
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(started ? { started } : {}),
  });
  return ALLOW;
}

class Recorder {
  readonly pending: PendingCalls;
  readonly client: HookClient;
  readonly stateDir: string;
  readonly settings: AgentSettings;
  readonly options: HookOptions;
  constructor(client: HookClient, stateDir: string, settings: AgentSettings, options: HookOptions) {
    this.client = client;
    this.stateDir = stateDir;
    this.settings = settings;
    this.options = options;
    this.pending = new PendingCalls(stateDir);
  }

  start(call: ObservedCall, now: number, decision: Decision): void {
    this.pending.put(this.client.id, call.pairKey, {
      startedAt: now,
      ...(decision.kind === 'allow' && (decision.rule || decision.noCache) ? { decision } : {}),
      server: call.server,
      tool: call.tool,
      ...(call.sessionId ? { sessionId: call.sessionId } : {}),
      ...(call.model ? { model: call.model } : {}),
      ...(call.actorEmail ? { actorEmail: call.actorEmail } : {}),
      ...(this.settings.capture.toolInput && call.input !== undefined ? { input: call.input } : {}),
    });
  }

  record(
    call: ObservedCall,
    facts: {
      eventTime: number;
      outcome: 'result' | 'error';
      decision: Decision;
      durationMs?: number;
      started?: { model?: string; actorEmail?: string; decision?: Decision };
    },
  ): void {
    const model =
      call.model ??
      facts.started?.model ??
      (call.sessionId ? new SessionNotes(this.stateDir).model(this.client.id, call.sessionId) : undefined);
    const actorEmail = call.actorEmail ?? facts.started?.actorEmail ?? this.settings.actorEmail;
    this.append(
      toolCallEvent(
        {
          agentType: this.client.agentType,
          server: call.server,
          tool: call.tool,
          eventTime: facts.eventTime,
          outcome: facts.outcome,
          decision: facts.decision,
          input: call.input,
          output: call.output,
          metadata: {
            source: 'hook',
            hook_event: call.clientEvent,
            paired: facts.started !== undefined,
            ...call.extra,
            ...this.policyFacts(call.server),
          },
          ...(this.settings.group ? { group: this.settings.group } : {}),
          ...(call.error === undefined ? {} : { error: call.error }),
          ...(facts.durationMs === undefined ? {} : { durationMs: facts.durationMs }),
          ...(call.sessionId ? { sessionId: call.sessionId } : {}),
          ...(model ? { model } : {}),
          ...(actorEmail ? { actorEmail } : {}),
        },
        this.settings.capture,
      ),
    );
  }

  /** Calls whose end never came: reported as invocations, so that a refused or abandoned call is still seen. */
  reportExpired(before: number): void {
    for (const call of this.pending.takeExpired(before)) {
      const actorEmail = call.actorEmail ?? this.settings.actorEmail;
      this.append(
        toolCallEvent(
          {
            agentType: this.client.agentType,
            server: call.server,
            tool: call.tool,
            eventTime: call.startedAt,
            outcome: 'invocation',
            decision: call.decision ?? ALLOW,
            input: call.input,
            metadata: { source: 'hook', paired: false, unfinished: true, ...this.policyFacts(call.server) },
            ...(this.settings.group ? { group: this.settings.group } : {}),
            ...(call.sessionId ? { sessionId: call.sessionId } : {}),
            ...(call.model ? { model: call.model } : {}),
            ...(actorEmail ? { actorEmail } : {}),
          },
          this.settings.capture,
        ),
      );
    }
  }

  private policyFacts(server: string): Record<string, unknown> {
    return policyFacts(this.settings, serverSource(this.stateDir, this.client.id, server));
  }

  private append(event: unknown): void {
    openSpool(this.stateDir, { ...this.options.spool, maxBytes: this.settings.spool.maxBytes }).append(event);
  }
}
