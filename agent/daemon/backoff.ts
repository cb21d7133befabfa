// When to try again after a failure: exponential backoff with full jitter (a random wait between zero and the
// exponential bound), so that 500 laptops that lost the service at the same moment do not come back in step; and the
// service's own Retry-After (RFC 9110 section 10.2.3) when it gave one, never retried before.
import { exponentialBound } from '#shared/core/backoff.ts';

export interface BackoffSettings {
  /** The bound of the first wait. */
  baseMs: number;
  /** The largest bound, however many failures in a row. */
  capMs: number;
}

/** The wait before retry number `attempt` (0 for the first retry): uniform in [0, min(cap, base * 2^attempt)). */
export function fullJitter(
  attempt: number,
  settings: BackoffSettings,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * exponentialBound(attempt + 1, settings.baseMs, settings.capMs));
}

/**
 * The wait after a failure: the service's Retry-After when it said one (with up to a tenth more, so a fleet told
 * the same moment spreads out after it), else full jitter. Retry-After is bounded by `maxRetryAfterMs`: a
 * misconfigured proxy must not park the agent for a week.
 */
export function nextWait(
  attempt: number,
  settings: BackoffSettings & { maxRetryAfterMs?: number },
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfter !== undefined) {
    const bounded = Math.min(retryAfter, settings.maxRetryAfterMs ?? 3_600_000);
    return bounded + Math.floor(random() * bounded * 0.1);
  }
  return fullJitter(attempt, settings, random);
}
