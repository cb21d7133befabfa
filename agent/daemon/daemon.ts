// The daemon (`agent run`): one worker that sends the inventory (at start, when a watched config file changes, on a
// rescan that finds a change, and every inventory interval), fetches the MCP policy (at start and every policy
// interval, with its ETag) and flushes the spool in batches, one request at a time.
// Between requests it sleeps until a timer, a file watch or the spool wakes it: it never polls busily. A failure to
// reach the service puts it in backoff (full jitter, or the service's Retry-After); what the service has not accepted
// stays in the spool, and resends are idempotent (event_id).
import { createHash } from 'node:crypto';
import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { canonicalBytes } from '#shared/core/canonical-json.ts';
import {
  type Answer,
  DeviceClient,
  type DevicePolicy,
  type EventsAccepted,
  type InventoryBody,
  refusedEventIndices,
  type ToolCallEvent,
} from '../client.ts';
import { readPolicyCache, savePolicyCache } from '../hooks/policy.ts';
import type { DeviceIdentity } from '../identity.ts';
import { ServiceUnreachable, servicePost } from '../service-address.ts';
import { nextWait } from './backoff.ts';
import { lockStateDir } from './lock.ts';
import type { Logger } from './log.ts';
import { type DaemonSettings, DEFAULT_SETTINGS } from './settings.ts';
import { type DaemonStatus, loadDaemonStatus, saveDaemonStatus } from './status.ts';
import { watchFiles } from './watch.ts';

/** What the inventory is, and which files may change it (agent/discovery). */
export interface InventorySource {
  scan(): Promise<{ body: InventoryBody; watchedPaths: readonly string[] }>;
}

/** The spool's reader side (agent/spool): nothing leaves it until acknowledged. */
export interface EventSpool<P = unknown> {
  /** The directory the hooks append to (watched for new events). */
  readonly dir: string;
  /** Up to `max` of the oldest unacknowledged records, each with the position just after it. */
  readBatch(max: number): Array<{ position: P; value: ToolCallEvent }>;
  /** Everything up to `position` was accepted. */
  ack(position: P): void;
  stats(): { dropped: number; torn: number; pending: number; bytes: number };
}

export interface DaemonOptions<P = unknown> {
  stateDir: string;
  baseUrl: string;
  identity: DeviceIdentity;
  version: string;
  inventory: InventorySource;
  spool: EventSpool<P>;
  log: Logger;
  settings?: Partial<DaemonSettings>;
  random?: () => number;
}

export interface Daemon {
  /** Stops cleanly: no new request, the one in flight given stopGraceMs, the status written, the lock released. */
  stop(): Promise<void>;
  /** Resolves once the daemon has stopped. */
  readonly stopped: Promise<void>;
}

/** A failure to get something to the service: retried after a backoff. */
interface Failure {
  error: string;
  retryAfterMs?: number;
}

/** The bytes an events body adds around its events (certificate, timestamp, spool counters), with room to spare. */
const ENVELOPE_BYTES = 16 * 1024;

/** An event_id derived from the event itself, for an event spooled without one: the same on every resend. */
export function derivedEventId(event: ToolCallEvent): string {
  const hex = createHash('sha256').update(canonicalBytes(event)).digest('hex');
  const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The latest event time an `event_too_old` refusal rules out: just before the window's start when the message gives
 * it (`… which starts at <time>`), else the time of the latest refused event (the window starts after it).
 */
function retentionStart(
  message: string,
  sending: ReadonlyArray<{ event: ToolCallEvent }>,
  named: readonly number[],
): number | undefined {
  const start = Date.parse(/starts at (\d{4}-\d\d-\d\dT[\d:.]+Z)/.exec(message)?.[1] ?? '');
  if (!Number.isNaN(start)) return start - 1;
  const times = named
    .map((i) => Date.parse(sending[i]?.event.event_time ?? ''))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : undefined;
}

const describe = (answer: Exclude<Answer<unknown>, { ok: true }>) =>
  `${answer.status} ${answer.code}: ${answer.message}`;

export async function startDaemon<P>(options: DaemonOptions<P>): Promise<Daemon> {
  const settings: DaemonSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const { stateDir, log, spool, inventory } = options;
  const random = options.random ?? Math.random;
  const release = lockStateDir(stateDir);
  const inflight = new AbortController();
  const client = new DeviceClient({
    baseUrl: options.baseUrl,
    identity: options.identity,
    post: servicePost(options.baseUrl, { timeoutMs: settings.requestTimeoutMs }),
  });

  const previous = loadDaemonStatus(stateDir);
  const status: DaemonStatus = {
    pid: process.pid,
    version: options.version,
    url: options.baseUrl,
    startedAt: new Date().toISOString(),
    inventory: {},
    events: {
      stored: previous?.events.stored ?? 0,
      duplicates: previous?.events.duplicates ?? 0,
      refused: previous?.events.refused ?? 0,
    },
  };
  const save = () => {
    try {
      saveDaemonStatus(stateDir, status);
    } catch (err) {
      log.log('warn', `cannot write the status file: ${(err as Error).message}`);
    }
  };

  // What wakes the worker.
  let stopping = false;
  let inventoryForced = true;
  let rescanDue = false;
  let flushDue = true;
  let policyDue = true;
  let wakeUp: (() => void) | undefined;
  const wake = () => wakeUp?.();
  const timers: NodeJS.Timeout[] = [];
  const debouncers: Array<{ timer?: NodeJS.Timeout }> = [];
  const debounced = (ms: number, then: () => void) => {
    const state: { timer?: NodeJS.Timeout } = {};
    debouncers.push(state);
    return () => {
      clearTimeout(state.timer);
      state.timer = setTimeout(then, ms);
    };
  };

  const rescanSoon = debounced(settings.debounceMs, () => {
    rescanDue = true;
    wake();
  });
  const watcher = watchFiles(
    () => rescanSoon(),
    (message) => log.log('warn', message),
  );
  const flushSoon = debounced(settings.flushDelayMs, () => {
    flushDue = true;
    wake();
  });
  let spoolWatch: FSWatcher | undefined;
  try {
    mkdirSync(spool.dir, { recursive: true, mode: 0o700 });
    // Only a segment file's change is an append; the spool's own state file changes with every acknowledgement.
    spoolWatch = watch(spool.dir, { persistent: false }, (_event, name) => {
      if (!name || name.toString().endsWith('.seg')) flushSoon();
    });
    spoolWatch.on('error', (err) => log.log('warn', `stopped watching the spool: ${err.message}`));
  } catch (err) {
    log.log(
      'warn',
      `cannot watch the spool ${spool.dir} (checked every ${settings.spoolPollMs} ms): ${(err as Error).message}`,
    );
  }
  timers.push(
    setInterval(() => {
      inventoryForced = true;
      wake();
    }, settings.inventoryIntervalMs),
    setInterval(() => {
      rescanDue = true;
      wake();
    }, settings.rescanIntervalMs),
    setInterval(() => {
      policyDue = true;
      wake();
    }, settings.policyIntervalMs),
    setInterval(() => {
      flushDue = true;
      wake();
    }, settings.spoolPollMs),
  );

  /** Sleeps `ms` (undefined: until woken); a wake ends it early only when `wakeable`; stop always does. */
  const sleep = (ms: number | undefined, wakeable: boolean) =>
    new Promise<void>((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        resolve();
      }
      wakeUp = () => {
        if (wakeable || stopping) done();
      };
    });

  // The inventory: a scan when due, sent when forced or changed, kept until the service has it.
  let sentHash: string | undefined;
  let pendingInventory: { body: InventoryBody; hash: string; watched: number } | undefined;
  async function inventoryStep(): Promise<Failure | undefined> {
    if (inventoryForced || rescanDue) {
      const forced = inventoryForced;
      inventoryForced = false;
      rescanDue = false;
      try {
        const { body, watchedPaths } = await inventory.scan();
        watcher.update(watchedPaths);
        const hash = createHash('sha256').update(canonicalBytes(body)).digest('hex');
        if (forced || hash !== sentHash || pendingInventory)
          pendingInventory = { body, hash, watched: watchedPaths.length };
      } catch (err) {
        log.log('error', `the scan failed: ${(err as Error).message}`);
      }
    }
    if (!pendingInventory) return undefined;
    const { body, hash, watched } = pendingInventory;
    const answer = await client.attempt<{ agentsIn: number; mcpsIn: number }>('/v1/devices/inventory', body, {
      header: true,
      signal: inflight.signal,
    });
    if (!answer.ok) return { error: `inventory: ${describe(answer)}`, ...retryAfter(answer) };
    sentHash = hash;
    pendingInventory = undefined;
    status.inventory = {
      sentAt: new Date().toISOString(),
      agents: answer.body.agentsIn,
      mcps: answer.body.mcpsIn,
      watchedPaths: watched,
    };
    log.log('info', `inventory sent: ${answer.body.agentsIn} agents, ${answer.body.mcpsIn} MCP servers`);
    save();
    return undefined;
  }

  // The MCP policy: fetched with the ETag of the copy held, which the hook decides from (agent/hooks/policy.ts).
  async function policyStep(): Promise<Failure | undefined> {
    if (!policyDue) return undefined;
    const held = readPolicyCache(stateDir);
    let answer: Answer<DevicePolicy>;
    try {
      answer = await client.attempt<DevicePolicy>('/v1/devices/policy', held ? { etag: held.etag } : {}, {
        header: true,
        signal: inflight.signal,
      });
    } catch (err) {
      // A service from before policies: nothing to fetch; asked again at the next interval.
      if (!(err instanceof ServiceUnreachable) || err.reason !== 'not_the_service') throw err;
      policyDue = false;
      log.log('warn', `the service has no policy route: ${err.message}`);
      return undefined;
    }
    if (!answer.ok) {
      if (answer.retryable) return { error: `policy: ${describe(answer)}`, ...retryAfter(answer) };
      policyDue = false;
      log.log('warn', `policy: ${describe(answer)}`);
      return undefined;
    }
    policyDue = false;
    const now = Date.now();
    const cache =
      answer.status === 304 && held
        ? { ...held, checkedAt: now }
        : {
            version: answer.body.version,
            etag: answer.body.etag,
            fetchedAt: now,
            checkedAt: now,
            policy: answer.body.policy,
          };
    savePolicyCache(stateDir, cache);
    if (cache.version !== held?.version || cache.etag !== held.etag)
      log.log('info', `policy version ${cache.version} in force (${cache.policy.rules.length} rules)`);
    status.policy = { version: cache.version, etag: cache.etag, checkedAt: new Date(now).toISOString() };
    save();
    return undefined;
  }

  // The events: the oldest batch that fits the protocol's bounds, acknowledged once the service accepted it.
  let batchLimit = settings.batch.events;
  /** Events of the current batch the service refused (by event_id), so that a re-read never counts them twice. */
  const refused = new Set<string>();
  /** The spool's counters, read once per flush (stats() counts the pending records: a read of the spool). */
  let counters: ReturnType<EventSpool<P>['stats']> | undefined;
  async function flushStep(): Promise<Failure | 'idle' | 'more'> {
    const records = spool.readBatch(batchLimit);
    if (records.length === 0) {
      flushDue = false;
      refused.clear();
      counters = undefined;
      return 'idle';
    }
    counters ??= spool.stats();
    // The longest prefix within the byte bound; each event keeps its spooled event_id (or one derived from it).
    const batch: Array<{ event: ToolCallEvent; position: P }> = [];
    let bytes = ENVELOPE_BYTES;
    for (const { value, position } of records) {
      const event = value.event_id ? value : { ...value, event_id: derivedEventId(value) };
      const size = canonicalBytes(event).length + 1;
      if (batch.length > 0 && bytes + size > settings.batch.bytes) break;
      batch.push({ event, position });
      bytes += size;
    }
    const last = (batch.at(-1) as { position: P }).position;
    let sending = batch.filter(({ event }) => !refused.has(event.event_id as string));
    while (sending.length > 0) {
      const answer = await client.attempt<EventsAccepted>(
        '/v1/devices/events',
        {
          events: sending.map((s) => s.event),
          spool: { dropped: counters.dropped, torn: counters.torn, refused: status.events.refused },
        },
        { header: true, signal: inflight.signal },
      );
      if (answer.ok) {
        spool.ack(last);
        refused.clear();
        status.events.stored += answer.body.accepted;
        status.events.duplicates += answer.body.duplicates;
        status.events.sentAt = new Date().toISOString();
        counters.pending = Math.max(0, counters.pending - batch.length);
        status.events.pending = counters.pending;
        log.log(
          'info',
          `events sent: ${answer.body.accepted} stored, ${answer.body.duplicates} duplicates (${sending.length} in the batch)`,
        );
        save();
        return 'more';
      }
      const named = answer.status === 400 ? refusedEventIndices(answer.message) : [];
      if (named.length > 0 && named.every((i) => i < sending.length)) {
        // The service will never take these events (too old for its retention, or invalid): drop them here,
        // count them, and send the rest of the batch.
        for (const i of named) {
          const id = sending[i]?.event.event_id as string;
          refused.add(id);
          status.events.refused++;
          log.log('warn', `event ${id} refused by the service and dropped: ${describe(answer)}`);
        }
        // Older than the retention window: so is every event of the batch before the window's start (or, when the
        // message does not say it, no later than the refused event), and each would cost a request of its own.
        const cutoff =
          answer.code === 'event_too_old' ? retentionStart(answer.message, sending, named) : undefined;
        if (cutoff !== undefined) {
          const older = sending.filter(
            ({ event }) => !refused.has(event.event_id as string) && Date.parse(event.event_time) <= cutoff,
          );
          for (const { event } of older) refused.add(event.event_id as string);
          status.events.refused += older.length;
          if (older.length > 0)
            log.log('warn', `${older.length} more events older than the service's retention window dropped`);
        }
        sending = sending.filter(({ event }) => !refused.has(event.event_id as string));
        save();
        continue;
      }
      if (answer.status === 413) {
        if (sending.length === 1) {
          const id = sending[0]?.event.event_id as string;
          refused.add(id);
          status.events.refused++;
          log.log('warn', `event ${id} is larger than the service takes, dropped: ${describe(answer)}`);
          save();
          sending = [];
          break;
        }
        batchLimit = Math.max(1, Math.floor(sending.length / 2));
        log.log(
          'warn',
          `the service takes smaller batches: now at most ${batchLimit} events (${describe(answer)})`,
        );
        return 'more';
      }
      return { error: `events: ${describe(answer)}`, ...retryAfter(answer) };
    }
    // Every event of the batch was refused: nothing left to send, the batch is done.
    spool.ack(last);
    refused.clear();
    return 'more';
  }

  const retryAfter = (answer: { retryAfterMs?: number }) =>
    answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {};

  async function worker() {
    let failures = 0;
    while (!stopping) {
      let failure: Failure | undefined;
      let busy = false;
      try {
        failure = await inventoryStep();
        if (!failure) failure = await policyStep();
        if (!failure && flushDue) {
          const flushed = await flushStep();
          if (typeof flushed === 'object') failure = flushed;
          else busy = flushed === 'more';
        }
      } catch (err) {
        if (stopping) break;
        failure = {
          error:
            err instanceof ServiceUnreachable
              ? err.message
              : `${(err as Error).name}: ${(err as Error).message}`,
        };
      }
      if (failure) {
        const wait = nextWait(failures, settings.backoff, failure.retryAfterMs, random);
        failures++;
        const nextAttemptAt = new Date(Date.now() + wait).toISOString();
        status.retrying = {
          since: status.retrying?.since ?? new Date().toISOString(),
          error: failure.error,
          nextAttemptAt,
        };
        log.log('warn', `${failure.error} (attempt ${failures}; next in ${Math.round(wait / 1000)} s)`);
        save();
        await sleep(wait, false);
        continue;
      }
      if (failures > 0) {
        log.log('info', `the service is reachable again after ${failures} failed attempts`);
        failures = 0;
        status.retrying = undefined;
        save();
      }
      if (!busy && !inventoryForced && !rescanDue && !flushDue && !policyDue) await sleep(undefined, true);
    }
  }

  log.log('info', `agent ${options.version} started for ${stateDir}, service ${options.baseUrl}`);
  save();
  const stopped = worker().finally(() => {
    for (const timer of timers) clearInterval(timer);
    for (const { timer } of debouncers) clearTimeout(timer);
    watcher.close();
    spoolWatch?.close();
    status.stoppedAt = new Date().toISOString();
    status.retrying = undefined;
    save();
    log.log('info', 'stopped');
    release();
  });

  return {
    stopped,
    async stop() {
      if (!stopping) {
        stopping = true;
        const grace = setTimeout(() => inflight.abort(), settings.stopGraceMs);
        wake();
        await stopped.catch(() => {});
        clearTimeout(grace);
      }
      await stopped;
    },
  };
}
