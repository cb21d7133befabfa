// What every OS's service definition is made of: the agent's daemon command (`agent run`) and where its state and
// logs live, for one user. Each OS turns it into its own file (launchd.ts, systemd.ts, task-scheduler.ts).
import { posix, win32 } from 'node:path';

export type ServicePlatform = 'darwin' | 'linux' | 'win32';

/** The names the agent registers under, the same on every machine so that an MDM script can find them. */
export const SERVICE_NAMES = {
  /** launchd job label (and the plist's file name). */
  launchd: 'com.acp.agent',
  /** systemd user unit. */
  systemd: 'acp-agent.service',
  /** Task Scheduler task, in the root folder. */
  task: 'acp-agent',
} as const;

export interface ServiceSpec {
  platform: ServicePlatform;
  /** The user's home directory (where the OS looks for per-user service definitions). */
  home: string;
  /** The agent's state directory: key, certificate, spool and logs. */
  stateDir: string;
  /** The daemon's command line: the Node binary, the agent's script, `run` and its options. */
  command: readonly string[];
  /** Windows: the account the task runs as (DOMAIN\user); its logon starts the task. */
  user?: string;
}

export interface ServiceDefinition {
  /** Where the file goes on the target machine (absolute, in the target platform's syntax). */
  path: string;
  contents: string | Buffer;
}

export const pathsOf = (platform: ServicePlatform) => (platform === 'win32' ? win32 : posix);

/** Where the OS's own service manager writes the daemon's stdout and stderr (the daemon logs to its own file). */
export const serviceLogPath = (spec: ServiceSpec) =>
  pathsOf(spec.platform).join(spec.stateDir, 'logs', 'service.log');

/**
 * `agent run` for this state directory, run by `node` on `script`. The daemon sleeps most of the time and waits on the
 * network when it works, so V8 is set for memory over speed: a 1 MB young generation (the default, up to 16 MB per
 * semi-space, costs tens of megabytes resident), and lite mode (no optimizing compilers, whose code and output cost
 * megabytes more; it also turns WebAssembly off, which the daemon's node:http requests never use).
 */
const DAEMON_NODE_FLAGS = ['--max-semi-space-size=1', '--lite-mode'] as const;

export const daemonCommand = (node: string, script: string, stateDir: string): string[] => [
  node,
  ...DAEMON_NODE_FLAGS,
  script,
  'run',
  '--state',
  stateDir,
];
