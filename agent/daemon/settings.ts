// The daemon's timings and bounds. The defaults are what a laptop fleet needs; tests shorten them.
import type { BackoffSettings } from './backoff.ts';

export interface DaemonSettings {
  /** The inventory is sent this often even when nothing changed (the service's last-seen times stay fresh). */
  inventoryIntervalMs: number;
  /** The MCP policy is fetched this often (an ETag makes an unchanged one a 304 with no body). */
  policyIntervalMs: number;
  /** The config files are rescanned this often, for the changes fs.watch missed; sent only when changed. */
  rescanIntervalMs: number;
  /** After a watched file changes, wait this long for the rest of the edit before rescanning. */
  debounceMs: number;
  /** After the spool changes, wait this long so that a burst of hook calls goes out as one batch. */
  flushDelayMs: number;
  /** The spool is also checked this often, for appends its directory watch missed. */
  spoolPollMs: number;
  backoff: BackoffSettings & { maxRetryAfterMs: number };
  /** The protocol's bounds on one events batch (device-protocol.md). */
  batch: { events: number; bytes: number };
  /** A request with no answer after this long is abandoned and retried. */
  requestTimeoutMs: number;
  /** On SIGTERM, a request in flight gets this long to be answered (so its batch can be acknowledged). */
  stopGraceMs: number;
}

export const DEFAULT_SETTINGS: DaemonSettings = {
  inventoryIntervalMs: 6 * 3_600_000,
  policyIntervalMs: 5 * 60_000,
  rescanIntervalMs: 15 * 60_000,
  debounceMs: 2000,
  flushDelayMs: 500,
  spoolPollMs: 60_000,
  backoff: { baseMs: 1000, capMs: 5 * 60_000, maxRetryAfterMs: 3_600_000 },
  batch: { events: 1000, bytes: 1024 * 1024 },
  requestTimeoutMs: 30_000,
  stopGraceMs: 5000,
};
