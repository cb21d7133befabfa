// The http environment provider: a client for an external environment service. Protocol (JSON, bearer token):
//   POST   {url}/environments                 {request_id, scope, valid_until}  → {environment_id, tunnel}
//   DELETE {url}/environments/{environment_id}                                  → 2xx (404 counts as gone)
//   POST   {url}/environments/{environment_id}/query {sql, max_rows, max_bytes, timeout_ms}
//                                                                               → {columns, rows, row_count, truncated, duration_ms}
//   GET    {url}/health                                                         → 2xx (the background probe)
// Every call has a timeout, and every answer is read with a size bound (a query's: its max_bytes plus 64 KiB; past
// that it is abandoned, 502); query rows are then capped in rows and bytes like the builtin provider's. An answer with
// an error status is 502 envsvc_error; no answer (refused, reset, timed out) is 503 envsvc_unavailable. Response
// bodies of errors are not passed on (they may carry internals).
import { conflict, dependencyFailed, dependencyUnavailable } from '../../core/errors.ts';
import type { CheckedStatement } from '../query/guard.ts';
import type { RequestRow } from '../requests.ts';
import type { TunnelView } from '../schemas.ts';
import { capRows } from './builtin/results.ts';
import type {
  EnvironmentProvider,
  EnvironmentQuerier,
  Provisioned,
  QueryLimits,
  QueryResult,
  QueryTarget,
} from './types.ts';

export interface HttpProviderOptions {
  url: string;
  /** Bearer token (from Secrets Manager or config). */
  token: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** The most a provision or teardown answer may weigh; a query answer may weigh its max_bytes plus this. */
const ANSWER_ALLOWANCE = 64 * 1024;

class AnswerTooLarge extends Error {}

/** Reads a body up to `limit` bytes; a longer one is abandoned (the connection is cancelled, not drained). */
async function boundedText(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new AnswerTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function call(
  options: HttpProviderOptions,
  method: string,
  path: string,
  body?: unknown,
  maxAnswerBytes = ANSWER_ALLOWANCE,
) {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.url.replace(/\/+$/, '')}${path}`;
  let res: Response;
  let text: string;
  try {
    res = await doFetch(url, {
      method,
      headers: {
        authorization: `Bearer ${options.token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    text = await boundedText(res, maxAnswerBytes);
  } catch (err) {
    if (err instanceof AnswerTooLarge) {
      throw dependencyFailed(
        'envsvc_error',
        `The environment service sent an answer larger than ${maxAnswerBytes} bytes (query.max_bytes and the protocol's allowance).`,
      );
    }
    const name = (err as { name?: string }).name;
    throw dependencyUnavailable(
      'envsvc_unavailable',
      name === 'TimeoutError' || name === 'AbortError'
        ? `The environment service did not answer within ${options.timeoutMs} ms.`
        : 'The environment service is unreachable.',
    );
  }
  return { status: res.status, text };
}

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw dependencyFailed('envsvc_error', `The environment service sent an invalid ${what} response.`);
  }
}

const failed = (status: number, what: string) =>
  dependencyFailed('envsvc_error', `The environment service answered ${status} to ${what}.`);

/** The background probe's check of the environment service: a 2xx from GET {url}/health within the timeout. */
export async function pingEnvironmentService(options: HttpProviderOptions): Promise<{ latency_ms: number }> {
  const started = performance.now();
  const res = await call(options, 'GET', '/health');
  if (res.status < 200 || res.status >= 300) throw failed(res.status, 'the health check');
  return { latency_ms: Math.round((performance.now() - started) * 100) / 100 };
}

export function createHttpProvider(options: HttpProviderOptions): EnvironmentProvider {
  return {
    ...createHttpQuerier(options),
    async provision(request: RequestRow): Promise<Provisioned> {
      const res = await call(options, 'POST', '/environments', {
        request_id: request.id,
        scope: request.scope,
        valid_until: request.validUntil?.toISOString() ?? null,
      });
      if (res.status < 200 || res.status >= 300) throw failed(res.status, 'provision');
      const body = parse<{ environment_id?: unknown; tunnel?: Partial<TunnelView> }>(res.text, 'provision');
      if (typeof body.environment_id !== 'string' || !body.environment_id) {
        throw dependencyFailed('envsvc_error', 'The environment service sent no environment_id.');
      }
      const now = new Date().toISOString();
      const t = body.tunnel ?? {};
      return {
        environmentId: body.environment_id,
        tunnel: {
          id: t.id ?? body.environment_id,
          provider: 'http',
          sidecar_name: t.sidecar_name ?? '',
          status: t.status ?? 'ready',
          last_error: '',
          api_url: t.api_url ?? '',
          edge_url: t.edge_url ?? '',
          explorer_url: t.explorer_url ?? '',
          public_url: t.public_url ?? '',
          created_at: t.created_at ?? now,
          updated_at: t.updated_at ?? now,
          credentials: (t.credentials ?? []).map((c) => ({
            id: String(c.id ?? ''),
            type: String(c.type ?? ''),
            username: String(c.username ?? ''),
            secret_preview: String(c.secret_preview ?? ''),
            is_active: c.is_active !== false,
            use_count: Number(c.use_count ?? 0),
            last_used_at: c.last_used_at ?? null,
          })),
        },
      };
    },
    async teardown(request: RequestRow): Promise<void> {
      if (!request.environmentId) return;
      const res = await call(options, 'DELETE', `/environments/${encodeURIComponent(request.environmentId)}`);
      if (res.status === 404) return;
      if (res.status < 200 || res.status >= 300) throw failed(res.status, 'teardown');
    },
  };
}

/** The http provider's query side alone: what the query function builds. */
export function createHttpQuerier(options: HttpProviderOptions): EnvironmentQuerier {
  return {
    name: 'http',
    checksActive: false,
    withoutTimeout: false,
    async query(
      request: QueryTarget,
      statement: CheckedStatement,
      limits: QueryLimits,
    ): Promise<QueryResult> {
      if (!request.environmentId) throw conflict('environment_not_ready', 'No environment yet.');
      const res = await call(
        options,
        'POST',
        `/environments/${encodeURIComponent(request.environmentId)}/query`,
        {
          sql: statement.text,
          max_rows: limits.maxRows,
          max_bytes: limits.maxBytes,
          timeout_ms: limits.statementTimeoutMs,
        },
        // The answer is read with a bound: the rows' JSON within max_bytes, plus the envelope and columns.
        limits.maxBytes + ANSWER_ALLOWANCE,
      );
      if (res.status < 200 || res.status >= 300) throw failed(res.status, 'query');
      const body = parse<Partial<QueryResult>>(res.text, 'query');
      const rows = Array.isArray(body.rows) ? (body.rows as unknown[]) : [];
      if (!rows.every(Array.isArray)) {
        throw dependencyFailed('envsvc_error', 'The environment service sent rows that are not arrays.');
      }
      // The same caps as the builtin provider, whatever the service did with max_rows and max_bytes.
      const columns = Array.isArray(body.columns) ? body.columns : [];
      const capped = capRows(
        rows as unknown[][],
        limits,
        columns.map((c) => String(c?.type ?? '')),
      );
      return {
        columns,
        rows: capped.rows,
        row_count: capped.rows.length,
        truncated: Boolean(body.truncated) || capped.truncated,
        duration_ms: Number(body.duration_ms ?? 0),
      };
    },
  };
}
