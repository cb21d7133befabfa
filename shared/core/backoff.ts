// Waiting after failures, for every sender here (the agent to the service, exports and alert webhooks to their
// receivers): an exponential bound, and the receiver's Retry-After (RFC 9110 section 10.2.3) when it gave one.

/** The bound of the wait after the `failures`-th failure in a row (1 for the first): base doubled per failure, at most cap. */
export function exponentialBound(failures: number, baseMs: number, capMs: number): number {
  return Math.min(capMs, baseMs * 2 ** Math.min(Math.max(0, failures - 1), 30));
}

/**
 * A Retry-After value in milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent or not
 * one of those (a malformed value is ignored rather than trusted).
 */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return undefined;
  return Math.max(0, date - now);
}
