// `agent service install | uninstall | status`: writes the OS's service definition for the daemon and asks the OS's
// service manager to start it (launchctl, systemctl --user, schtasks). With a root directory, only the file is
// written, under that root (packaging, tests); nothing is registered.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { readDaemonStatus } from '../daemon/status.ts';
import {
  SERVICE_NAMES,
  type ServiceDefinition,
  type ServicePlatform,
  type ServiceSpec,
} from './definition.ts';
import { launchAgent } from './launchd.ts';
import { systemdUnit } from './systemd.ts';
import { scheduledTask } from './task-scheduler.ts';

export interface ServiceOptions extends ServiceSpec {
  /** Write the definition under this directory instead of the real location, and register nothing. */
  root?: string;
  /** The environment the service manager's commands run with (PATH finds them; XDG_CONFIG_HOME for systemd). */
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

export function serviceDefinition(spec: ServiceSpec, env: NodeJS.ProcessEnv = {}): ServiceDefinition {
  for (const arg of spec.command) {
    // None of the three formats can carry these in an argument as the daemon would receive it.
    if (/[\0\r\n]/.test(arg))
      throw new Error(`cannot install a service whose command has a line break: ${arg}`);
  }
  switch (spec.platform) {
    case 'darwin':
      return launchAgent(spec);
    case 'linux':
      return systemdUnit(spec, env.XDG_CONFIG_HOME || undefined);
    case 'win32':
      return scheduledTask(spec);
  }
}

/** Where a target path lands under `root`: the path without its drive or leading separator, below the root. */
export function underRoot(root: string, target: string): string {
  return join(root, target.replace(/^[A-Za-z]:/, '').replace(/^[\\/]+/, ''));
}

/** A program found on PATH (with Windows' extensions), or undefined. */
export function findProgram(
  name: string,
  env: NodeJS.ProcessEnv,
  platform = process.platform,
): string | undefined {
  const extensions = platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    for (const ext of extensions) {
      const candidate = join(dir, name + ext);
      try {
        if (dir && statSync(candidate).isFile()) return candidate;
      } catch {}
    }
  }
  return undefined;
}

interface Step {
  program: string;
  args: string[];
  /** A failure of this step does not stop the ones after it (stopping what may not be running). */
  optional?: boolean;
}

const shellWord = (word: string) =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
const commandLine = (step: Step) => [step.program, ...step.args].map(shellWord).join(' ');

function runSteps(steps: Step[], options: ServiceOptions, print: (line: string) => void): boolean {
  const env = options.env ?? process.env;
  for (const step of steps) {
    const found = findProgram(step.program, env, options.platform);
    if (!found) {
      print(`${step.program} is not available here; run these yourself:`);
      for (const rest of steps.slice(steps.indexOf(step))) print(`  ${commandLine(rest)}`);
      return false;
    }
    const result = spawnSync(found, step.args, { env, encoding: 'utf8' });
    if (result.status !== 0 && !step.optional) {
      const why = (result.stderr || result.stdout || result.error?.message || '').trim();
      print(`${commandLine(step)} failed${why ? `: ${why}` : ''}`);
      print('then run these yourself:');
      for (const rest of steps.slice(steps.indexOf(step))) print(`  ${commandLine(rest)}`);
      return false;
    }
  }
  return true;
}

const launchdDomain = () => `gui/${process.getuid?.() ?? 501}`;
/** Unloads the job if it is loaded (a reinstall replaces it; an uninstall stops it). */
const launchdBootout = (): Step => ({
  program: 'launchctl',
  args: ['bootout', `${launchdDomain()}/${SERVICE_NAMES.launchd}`],
  optional: true,
});

function startSteps(platform: ServicePlatform, definition: ServiceDefinition): Step[] {
  switch (platform) {
    case 'darwin':
      return [
        launchdBootout(),
        { program: 'launchctl', args: ['bootstrap', launchdDomain(), definition.path] },
      ];
    case 'linux':
      return [
        { program: 'systemctl', args: ['--user', 'daemon-reload'] },
        { program: 'systemctl', args: ['--user', 'enable', '--now', SERVICE_NAMES.systemd] },
        // A unit already running is restarted, so that a new agent version takes over.
        { program: 'systemctl', args: ['--user', 'restart', SERVICE_NAMES.systemd] },
      ];
    case 'win32':
      return [
        { program: 'schtasks', args: ['/Create', '/TN', SERVICE_NAMES.task, '/XML', definition.path, '/F'] },
        { program: 'schtasks', args: ['/End', '/TN', SERVICE_NAMES.task], optional: true },
        { program: 'schtasks', args: ['/Run', '/TN', SERVICE_NAMES.task] },
      ];
  }
}

function stopSteps(platform: ServicePlatform): Step[] {
  switch (platform) {
    case 'darwin':
      return [launchdBootout()];
    case 'linux':
      return [
        { program: 'systemctl', args: ['--user', 'disable', '--now', SERVICE_NAMES.systemd], optional: true },
        { program: 'systemctl', args: ['--user', 'daemon-reload'], optional: true },
      ];
    case 'win32':
      return [
        { program: 'schtasks', args: ['/End', '/TN', SERVICE_NAMES.task], optional: true },
        { program: 'schtasks', args: ['/Delete', '/TN', SERVICE_NAMES.task, '/F'], optional: true },
      ];
  }
}

function statusSteps(platform: ServicePlatform): Step[] {
  switch (platform) {
    case 'darwin':
      return [{ program: 'launchctl', args: ['print', `${launchdDomain()}/${SERVICE_NAMES.launchd}`] }];
    case 'linux':
      return [{ program: 'systemctl', args: ['--user', 'status', '--no-pager', SERVICE_NAMES.systemd] }];
    case 'win32':
      return [{ program: 'schtasks', args: ['/Query', '/TN', SERVICE_NAMES.task, '/FO', 'LIST', '/V'] }];
  }
}

/** Writes the definition (and the log directory the service manager writes into) and starts the service. */
export function installService(options: ServiceOptions): { path: string; registered: boolean } {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const definition = serviceDefinition(options, options.env);
  const path = options.root ? underRoot(options.root, definition.path) : definition.path;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, definition.contents, { mode: 0o644 });
  print(`Wrote ${path}`);
  if (options.root) {
    print(`Not registered (--root): on the target machine it goes to ${definition.path}.`);
    return { path, registered: false };
  }
  mkdirSync(join(options.stateDir, 'logs'), { recursive: true, mode: 0o700 });
  const registered = runSteps(startSteps(options.platform, definition), options, print);
  if (registered) print(`Service ${serviceName(options.platform)} installed and started.`);
  return { path, registered };
}

export function uninstallService(options: ServiceOptions): { path: string; removed: boolean } {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const definition = serviceDefinition(options, options.env);
  const path = options.root ? underRoot(options.root, definition.path) : definition.path;
  if (!options.root) runSteps(stopSteps(options.platform), options, print);
  const removed = existsSync(path);
  rmSync(path, { force: true });
  print(
    removed
      ? `Removed ${path}. The state directory ${options.stateDir} (key, spool, logs) is left; delete it to forget this device.`
      : `No service definition at ${path}.`,
  );
  return { path, removed };
}

const serviceName = (platform: ServicePlatform) =>
  platform === 'darwin'
    ? SERVICE_NAMES.launchd
    : platform === 'linux'
      ? SERVICE_NAMES.systemd
      : SERVICE_NAMES.task;

/** What is installed, what the service manager says, and what the daemon last reported in its status file. */
export function serviceStatus(options: ServiceOptions): { installed: boolean; running: boolean } {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const definition = serviceDefinition(options, options.env);
  const path = options.root ? underRoot(options.root, definition.path) : definition.path;
  const installed = existsSync(path);
  print(
    `Service ${serviceName(options.platform)}: ${installed ? `installed (${path})` : `not installed (${path})`}`,
  );
  if (installed && !options.root) {
    const env = options.env ?? process.env;
    const [step] = statusSteps(options.platform);
    const found = step && findProgram(step.program, env, options.platform);
    if (step && found) {
      const result = spawnSync(found, step.args, { env, encoding: 'utf8' });
      const text = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
      if (text)
        print(
          text
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n'),
        );
    }
  }
  const daemon = readDaemonStatus(options.stateDir);
  if (!daemon) {
    print(`Daemon: no status in ${options.stateDir} (it has not run with this state directory)`);
    return { installed, running: false };
  }
  print(
    `Daemon: ${daemon.running ? `running (pid ${daemon.pid})` : 'not running'}, since ${daemon.startedAt}`,
  );
  for (const line of daemon.summary) print(`  ${line}`);
  return { installed, running: daemon.running };
}
