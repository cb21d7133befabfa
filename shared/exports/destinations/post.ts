// One POST of a batch to a receiver, read back as a DeliveryResult: which statuses are worth trying again, and how
// long the receiver asked us to wait (Retry-After, in seconds or as an HTTP date).
import { retryAfterMs } from '../../core/backoff.ts';
import type { DeliveryResult } from './destination.ts';

/** Statuses for which the same request cannot succeed later: the destination's settings or secret need a change. */
const PERMANENT = new Set([400, 401, 403, 404, 405, 413, 415, 422]);

export interface Post {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Posts; never throws. The message names the status or the failure, never a header or the body. */
export async function postBatch(post: Post): Promise<DeliveryResult> {
  const timeout = AbortSignal.timeout(post.timeoutMs);
  const signal = post.signal ? AbortSignal.any([post.signal, timeout]) : timeout;
  let res: Awaited<ReturnType<typeof fetch>>;
  try {
    res = await fetch(post.url, { method: 'POST', headers: post.headers, body: post.body, signal });
  } catch (err) {
    const timedOut = timeout.aborted || (err as Error).name === 'TimeoutError';
    return { ok: false, permanent: false, message: timedOut ? 'timed out' : 'network error' };
  }
  await res.body?.cancel();
  if (res.ok) return { ok: true };
  const after =
    res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get('retry-after')) : undefined;
  return {
    ok: false,
    status: res.status,
    ...(after === undefined ? {} : { retryAfterMs: after }),
    permanent: PERMANENT.has(res.status),
    message: `HTTP ${res.status}`,
  };
}
