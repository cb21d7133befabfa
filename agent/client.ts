// A typed client of the device API (device-protocol.md): canonical signing, one signed attempt at a time (the
// daemon schedules its own retries), bounded retries with fresh timestamps for the CLI, event batching with event_id
// so that retries never duplicate events.
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import type { RequestBody, ResponseBody } from '#client/api.ts';
import { retryAfterMs } from '#shared/core/backoff.ts';
import { canonicalBytes } from '#shared/core/canonical-json.ts';
import { type BackoffSettings, nextWait } from './daemon/backoff.ts';
import type { DeviceIdentity } from './identity.ts';
import {
  endpoint,
  notTheService,
  type ServicePost,
  ServiceUnreachable,
  servicePost,
} from './service-address.ts';

/** What the API takes and answers, from the OpenAPI document's generated types (client/openapi.d.ts). */
export type AgentReport = RequestBody<'reportInventory'>['agents'][number];
export type McpReport = NonNullable<AgentReport['mcps']>[number];
export type ToolCallEvent = RequestBody<'ingestEvents'>['events'][number];
export type InventoryBody = Omit<RequestBody<'reportInventory'>, 'certificate' | 'clientTimestamp'>;
export type EventsBody = Omit<RequestBody<'ingestEvents'>, 'certificate' | 'clientTimestamp'>;
type Registered = ResponseBody<'registerDevice', 201>;
type InventoryAccepted = ResponseBody<'reportInventory', 200>;
export type DevicePolicy = ResponseBody<'fetchDevicePolicy', 200>;
export type EventsAccepted = ResponseBody<'ingestEvents', 200>;

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  /** The service's own sentence, without the status and code. */
  readonly detail: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.detail = message;
  }
}

/** The service refused a batch for an event in it: `index` counts from the first event given to sendEvents. */
export class EventRefused extends ApiError {
  override name = 'EventRefused';
  readonly index: number;
  constructor(error: ApiError, index: number) {
    super(error.status, error.code, error.detail);
    this.index = index;
  }
}

/** The indices of the events a 400 names (`events[3]`, as the service's messages name fields), in order. */
export function refusedEventIndices(message: string): number[] {
  return [...new Set([...message.matchAll(/\bevents\[(\d+)\]/g)].map((m) => Number(m[1])))].sort(
    (a, b) => a - b,
  );
}

/** Signature over `bytes`: DER ECDSA P-256/SHA-256 or Ed25519, standard base64 (padded). */
export function signBytes(identity: DeviceIdentity, bytes: Buffer): string {
  const key = createPrivateKey(identity.privateKeyPem);
  const signature =
    identity.keyType === 'ed25519'
      ? sign(null, bytes, key)
      : sign('sha256', bytes, { key, dsaEncoding: 'der' });
  return signature.toString('base64');
}

/** Signature over the RFC 8785 canonical JSON of `body`. */
export const signBody = (identity: DeviceIdentity, body: unknown): string =>
  signBytes(identity, canonicalBytes(body));

const RETRYABLE_CODES = new Set(['replayed_request', 'stale_timestamp', 'database_unavailable']);
/** Network failures worth retrying in a CLI command; the others are mistakes a retry cannot fix. */
const TRANSIENT_NETWORK = new Set(['ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'EHOSTUNREACH']);
const MAX_BATCH_BYTES = 900 * 1024;

export interface ClientOptions {
  baseUrl: string;
  identity: DeviceIdentity;
  maxBatch?: number;
  retries?: number;
  /** The waits between the CLI's retries (the daemon keeps its own). */
  backoff?: BackoffSettings & { maxRetryAfterMs?: number };
  /** How a request goes out (default: servicePost, node:http with a 30 s timeout). */
  post?: ServicePost;
  /** Counts requests actually sent (tests and benchmarks). */
  onRequest?: (path: string, attempt: number) => void;
}

/** One signed request's answer: the body when accepted, else the refusal, and whether a retry may succeed. */
export type Answer<T> =
  | { ok: true; status: number; body: T }
  | {
      ok: false;
      status: number;
      code: string;
      message: string;
      retryable: boolean;
      /** The service's Retry-After, in milliseconds. */
      retryAfterMs?: number;
    };

interface Mode {
  /** The signature in X-Device-Signature (inventory, events), else inside the body (register). */
  header: boolean;
  token?: string;
  signal?: AbortSignal;
}

export class DeviceClient {
  readonly options: Required<Omit<ClientOptions, 'onRequest' | 'post'>> & Pick<ClientOptions, 'onRequest'>;
  private readonly send: ServicePost;
  constructor(options: ClientOptions) {
    this.options = {
      maxBatch: 1000,
      retries: 4,
      backoff: { baseMs: 200, capMs: 3000, maxRetryAfterMs: 30_000 },
      ...options,
    };
    this.send = options.post ?? servicePost(options.baseUrl);
  }

  /**
   * One signed POST of `fields` (plus certificate and a fresh clientTimestamp), sent as the very canonical bytes
   * that were signed: the service checks those first and need not canonicalize again (the fast path). Throws
   * ServiceUnreachable when nothing (or not the service) answered.
   */
  async attempt<T>(path: string, fields: Record<string, unknown>, mode: Mode): Promise<Answer<T>> {
    const { baseUrl, identity } = this.options;
    const body = {
      ...fields,
      certificate: identity.certificatePem,
      clientTimestamp: new Date().toISOString(),
    };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const canonical = canonicalBytes(body);
    const signature = signBytes(identity, canonical);
    let payload: string | Buffer = canonical;
    if (mode.header) headers['x-device-signature'] = signature;
    else payload = JSON.stringify({ ...body, signature });
    if (mode.token) headers.authorization = `Bearer ${mode.token}`;
    const res = await this.send(endpoint(baseUrl, path), {
      headers,
      body: payload,
      ...(mode.signal ? { signal: mode.signal } : {}),
    });
    const { text } = res;
    let parsed: (T & { error?: string; message?: string }) | undefined;
    try {
      parsed = (text ? JSON.parse(text) : {}) as T & { error?: string; message?: string };
    } catch {}
    const retryAfter = retryAfterMs(res.header('retry-after'));
    const busy = res.status >= 500 || res.status === 429;
    if (!parsed || typeof parsed !== 'object') {
      // A proxy's page while the service is down is worth waiting for; a page with any other status is not the API.
      if (!busy) throw notTheService(baseUrl, path, res.status, res.header('content-type'));
      return {
        ok: false,
        status: res.status,
        code: 'unavailable',
        message: `HTTP ${res.status} from ${baseUrl}`,
        retryable: true,
        ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      };
    }
    // 304: the copy the device named (etag) is still current; the body is empty.
    if ((res.status >= 200 && res.status < 300) || res.status === 304)
      return { ok: true, status: res.status, body: parsed };
    if (res.status === 404 && parsed.error === 'not_found')
      throw notTheService(baseUrl, path, res.status, 'a 404 for this route');
    const code = parsed.error ?? 'error';
    return {
      ok: false,
      status: res.status,
      code,
      message: parsed.message ?? text,
      retryable: busy || RETRYABLE_CODES.has(code),
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    };
  }

  /** attempt(), retried a few times when a retry may succeed (re-signed each time: the protocol's replay rules). */
  private async post<T>(path: string, build: () => Record<string, unknown>, mode: Mode) {
    const { retries, backoff } = this.options;
    for (let attempt = 0; ; attempt++) {
      this.options.onRequest?.(path, attempt);
      let answer: Answer<T> | undefined;
      try {
        answer = await this.attempt<T>(path, build(), mode);
      } catch (err) {
        if (!(err instanceof ServiceUnreachable) || !TRANSIENT_NETWORK.has(err.reason) || attempt >= retries)
          throw err;
      }
      if (answer?.ok) return { status: answer.status, body: answer.body };
      if (answer && (!answer.retryable || attempt >= retries))
        throw new ApiError(answer.status, answer.code, answer.message);
      await new Promise((r) => setTimeout(r, nextWait(attempt, backoff, answer?.retryAfterMs)));
    }
  }

  register(token: string, hardware: { serialNumber: string; brand: string; model: string }, ownerEmail = '') {
    return this.post<Registered>('/v1/devices/register', () => ({ ...hardware, ownerEmail }), {
      header: false,
      token,
    });
  }

  /** Reports the agents and their MCP servers; `agentVersion` is this agent's own version (agent/version.ts). */
  reportInventory(agents: AgentReport[], agentVersion?: string) {
    return this.post<InventoryAccepted>(
      '/v1/devices/inventory',
      () => (agentVersion ? { agentVersion, agents } : { agents }),
      { header: true },
    );
  }

  /**
   * Sends events in batches (at most maxBatch events and ~900 KB each). Every event gets an event_id first, so a
   * retried batch is deduplicated by the service instead of stored twice. A batch refused for one of its events
   * throws EventRefused with that event's index in `events`.
   */
  async sendEvents(
    events: ToolCallEvent[],
  ): Promise<{ accepted: number; duplicates: number; batches: number }> {
    const withIds = events.map((e) => ({ ...e, event_id: e.event_id ?? randomUUID() }));
    let accepted = 0;
    let duplicates = 0;
    let batches = 0;
    for (let i = 0; i < withIds.length; ) {
      const batch: ToolCallEvent[] = [];
      const first = i;
      let bytes = 0;
      while (i < withIds.length && batch.length < this.options.maxBatch) {
        const size = Buffer.byteLength(JSON.stringify(withIds[i]));
        if (batch.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
        batch.push(withIds[i] as ToolCallEvent);
        bytes += size;
        i++;
      }
      try {
        const { body } = await this.post<EventsAccepted>('/v1/devices/events', () => ({ events: batch }), {
          header: true,
        });
        accepted += body.accepted;
        duplicates += body.duplicates;
      } catch (err) {
        const [index] = err instanceof ApiError && err.status === 400 ? refusedEventIndices(err.detail) : [];
        if (index !== undefined) throw new EventRefused(err as ApiError, first + index);
        throw err;
      }
      batches++;
    }
    return { accepted, duplicates, batches };
  }
}
