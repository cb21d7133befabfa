// What the daemon last did, in <state>/daemon-status.json, for `agent service status` and for a person looking at a
// laptop: when it started, what it last sent, what is waiting, and why it is retrying. Also keeps the daemon's
// cumulative count of events the service refused, which it reports with each batch.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DaemonStatus {
  pid: number;
  version: string;
  url: string;
  startedAt: string;
  /** Set when the daemon stopped cleanly. */
  stoppedAt?: string;
  inventory: { sentAt?: string; agents?: number; mcps?: number; watchedPaths?: number };
  events: {
    /** Stored by the service since this status file was created (duplicates not counted). */
    stored: number;
    duplicates: number;
    /** Refused by the service (for example older than its retention window) and dropped here. */
    refused: number;
    sentAt?: string;
    pending?: number;
  };
  /** The MCP policy the device holds: its version, and when the service last confirmed it. */
  policy?: { version: number; etag: string; checkedAt: string };
  /** The last failure to reach the service, until the next success. */
  retrying?: { since: string; error: string; nextAttemptAt: string };
}

const FILE = 'daemon-status.json';

export function loadDaemonStatus(stateDir: string): DaemonStatus | undefined {
  try {
    return JSON.parse(readFileSync(join(stateDir, FILE), 'utf8')) as DaemonStatus;
  } catch {
    return undefined;
  }
}

/** Written whole to a temporary file and renamed over the old one: a reader never sees half a file. */
export function saveDaemonStatus(stateDir: string, status: DaemonStatus): void {
  const path = join(stateDir, FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** Whether process `pid` exists (EPERM: it exists, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The status as lines for a person, and whether the daemon that wrote it is still running. */
export function readDaemonStatus(
  stateDir: string,
): { running: boolean; pid: number; startedAt: string; summary: string[] } | undefined {
  const status = loadDaemonStatus(stateDir);
  if (!status) return undefined;
  const running = !status.stoppedAt && processAlive(status.pid);
  const { inventory, events, retrying } = status;
  const summary = [
    `version ${status.version}, service ${status.url}`,
    inventory.sentAt
      ? `inventory sent ${inventory.sentAt}: ${inventory.agents} agents, ${inventory.mcps} MCP servers (${inventory.watchedPaths} config files watched)`
      : 'inventory not sent yet',
    `events: ${events.stored} stored, ${events.duplicates} duplicates, ${events.refused} refused by the service${events.pending !== undefined ? `, ${events.pending} waiting in the spool` : ''}${events.sentAt ? `; last sent ${events.sentAt}` : ''}`,
  ];
  summary.push(
    status.policy
      ? `MCP policy version ${status.policy.version}, confirmed by the service ${status.policy.checkedAt}`
      : 'MCP policy not fetched yet',
  );
  if (retrying)
    summary.push(
      `retrying since ${retrying.since}, next attempt ${retrying.nextAttemptAt}: ${retrying.error}`,
    );
  if (status.stoppedAt) summary.push(`stopped ${status.stoppedAt}`);
  return { running, pid: status.pid, startedAt: status.startedAt, summary };
}
