// `agent run`, as the CLI and the service managers start it: the daemon over this machine's scan and spool, logging
// to <state>/logs/agent.log (and to the terminal when there is one), stopped cleanly by SIGTERM or SIGINT.
import { join } from 'node:path';
import { parseDuration } from '#shared/core/config/duration.ts';
import type { ScanOptions } from '../discovery/scan.ts';
import type { DeviceIdentity } from '../identity.ts';
import { startDaemon } from './daemon.ts';
import { rotatingLog } from './log.ts';
import type { DaemonSettings } from './settings.ts';
import { machineSources } from './sources.ts';

function interval(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000)
    throw new Error(`${flag} must be a duration of at least 1s (30s, 15m, 6h), not ${JSON.stringify(text)}`);
  return ms;
}

export async function runDaemonCommand(options: {
  stateDir: string;
  baseUrl: string;
  identity: DeviceIdentity;
  intervals: { inventory?: string | undefined; rescan?: string | undefined };
  /** What the scan looks at: the home, the environment, the project directories given. */
  scan: Omit<ScanOptions, 'clients'>;
}): Promise<void> {
  const settings: Partial<DaemonSettings> = {};
  const inventoryMs = interval(options.intervals.inventory, '--inventory-interval');
  const rescanMs = interval(options.intervals.rescan, '--rescan-interval');
  if (inventoryMs) settings.inventoryIntervalMs = inventoryMs;
  if (rescanMs) settings.rescanIntervalMs = rescanMs;
  const log = rotatingLog(join(options.stateDir, 'logs', 'agent.log'), {
    ...(process.stdout.isTTY ? { echo: (line: string) => process.stdout.write(`${line}\n`) } : {}),
  });
  const { version, inventory, spool } = await machineSources(options.stateDir, options.scan);
  const daemon = await startDaemon({
    stateDir: options.stateDir,
    baseUrl: options.baseUrl,
    identity: options.identity,
    version,
    inventory,
    spool,
    log,
    settings,
  });
  const stop = (signal: string) => {
    log.log('info', `${signal}: stopping`);
    void daemon.stop();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  await daemon.stopped;
  log.close();
}
