// What a failed send writes on its cursor, the same for the tool calls' cursors (export_cursors) and the other
// classes' (export_class_cursors): the failures in a row, the error as the API shows it, and when to try again.
import { type SQL, sql } from 'drizzle-orm';
import { exponentialBound } from '../../core/backoff.ts';
import type { Config } from '../../core/config/schema.ts';
import { intParam, textParam } from '../../core/db/sql-values.ts';
import type { DeliveryResult } from '../destinations/destination.ts';

/** How long to wait after the `attempts`-th failure in a row. */
export function backoffMs(
  config: Pick<Config, 'exports'>,
  attempts: number,
  result: Extract<DeliveryResult, { ok: false }>,
  random: () => number = Math.random,
): number {
  const { backoff, max_backoff } = config.exports;
  if (result.permanent) return max_backoff;
  if (result.retryAfterMs !== undefined) return Math.min(result.retryAfterMs, max_backoff);
  const full = exponentialBound(attempts, backoff, max_backoff);
  // "Equal jitter": at least half the wait, so that destinations failing together do not retry together.
  return Math.round(full / 2 + (full / 2) * random());
}

/** The SET list of a cursor after its `attempts`-th failure in a row. */
export function failureAssignments(
  config: Pick<Config, 'exports'>,
  attempts: number,
  result: Extract<DeliveryResult, { ok: false }>,
  random: () => number,
): SQL {
  const wait = backoffMs(config, attempts, result, random);
  return sql`attempts = ${intParam(attempts)}, last_error = ${textParam(result.message)},
    last_error_permanent = ${result.permanent}, last_status = ${result.status ?? null}::int,
    next_attempt_at = now() + make_interval(secs => ${wait / 1000}::float8)`;
}
