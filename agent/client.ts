// A typed client of the device API (device-protocol.md): canonical signing, retries with fresh timestamps,
// event batching with event_id so that retries never duplicate events.
import { randomUUID, sign } from 'node:crypto';
import type { RequestBody, ResponseBody } from '#client/api.ts';
import { canonicalBytes } from '#shared/device/canonical-json.ts';
import { type DeviceIdentity, privateKeyOf } from './identity.ts';

/** What the API takes and answers, from the OpenAPI document's generated types (client/openapi.d.ts). */
export type AgentReport = RequestBody<'reportInventory'>['agents'][number];
export type McpReport = NonNullable<AgentReport['mcps']>[number];
export type ToolCallEvent = RequestBody<'ingestEvents'>['events'][number];
type Registered = ResponseBody<'registerDevice', 201>;
type InventoryAccepted = ResponseBody<'reportInventory', 200>;
type EventsAccepted = ResponseBody<'ingestEvents', 200>;

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
  }
}

/** Signature over `bytes`: DER ECDSA P-256/SHA-256 or Ed25519, standard base64 (padded). */
export function signBytes(identity: DeviceIdentity, bytes: Buffer): string {
  const key = privateKeyOf(identity);
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
const MAX_BATCH_BYTES = 900 * 1024;

export interface ClientOptions {
  baseUrl: string;
  identity: DeviceIdentity;
  maxBatch?: number;
  retries?: number;
  fetch?: typeof fetch;
  /** Counts requests actually sent (tests and benchmarks). */
  onRequest?: (path: string, attempt: number) => void;
}

export class DeviceClient {
  readonly options: Required<Omit<ClientOptions, 'onRequest'>> & Pick<ClientOptions, 'onRequest'>;
  constructor(options: ClientOptions) {
    this.options = { maxBatch: 1000, retries: 4, fetch: globalThis.fetch, ...options };
  }

  /** POSTs a signed body; re-signs with a fresh clientTimestamp on every retry (the protocol's replay rules). */
  private async post<T>(
    path: string,
    build: () => Record<string, unknown>,
    mode: { header: boolean; token?: string },
  ): Promise<{ status: number; body: T }> {
    const { baseUrl, identity, retries } = this.options;
    for (let attempt = 0; ; attempt++) {
      const body = {
        ...build(),
        certificate: identity.certificatePem,
        clientTimestamp: new Date().toISOString(),
      };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      // The body goes out as the very canonical bytes that were signed: the service checks those first and need
      // not canonicalize it again (the fast path). Register carries the signature inside the body instead.
      const canonical = canonicalBytes(body);
      const signature = signBytes(identity, canonical);
      let payload: string | Buffer = canonical;
      if (mode.header) headers['x-device-signature'] = signature;
      else payload = JSON.stringify({ ...body, signature });
      if (mode.token) headers.authorization = `Bearer ${mode.token}`;
      this.options.onRequest?.(path, attempt);
      let res: Response | undefined;
      try {
        res = await this.options.fetch(`${baseUrl.replace(/\/+$/, '')}${path}`, {
          method: 'POST',
          headers,
          body: payload,
        });
      } catch (err) {
        if (attempt >= retries) throw err;
      }
      if (res) {
        const text = await res.text();
        const parsed = (text ? JSON.parse(text) : {}) as T & { error?: string; message?: string };
        if (res.ok) return { status: res.status, body: parsed };
        const retryable = res.status >= 500 || res.status === 429 || RETRYABLE_CODES.has(parsed.error ?? '');
        if (!retryable || attempt >= retries) {
          throw new ApiError(res.status, parsed.error ?? 'error', parsed.message ?? text);
        }
      }
      await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 3000) * (0.5 + Math.random())));
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
   * retried batch is deduplicated by the service instead of stored twice.
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
      let bytes = 0;
      while (i < withIds.length && batch.length < this.options.maxBatch) {
        const size = Buffer.byteLength(JSON.stringify(withIds[i]));
        if (batch.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
        batch.push(withIds[i] as ToolCallEvent);
        bytes += size;
        i++;
      }
      const { body } = await this.post<EventsAccepted>('/v1/devices/events', () => ({ events: batch }), {
        header: true,
      });
      accepted += body.accepted;
      duplicates += body.duplicates;
      batches++;
    }
    return { accepted, duplicates, batches };
  }
}
