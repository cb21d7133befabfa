// Linux: a systemd user unit (systemd.unit(5), systemd.service(5)) in ~/.config/systemd/user, started with the
// user's session (default.target) and restarted when it fails.
import { posix } from 'node:path';
import { SERVICE_NAMES, type ServiceDefinition, type ServiceSpec } from './definition.ts';

/**
 * One ExecStart= argument, double-quoted (systemd.syntax(7) "Quoting"): backslash and double quote escaped, and
 * `%` and `$` doubled, since systemd expands specifiers and environment variables even inside quotes
 * (systemd.service(5) "Command lines").
 */
export function execArgument(arg: string): string {
  return `"${arg.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

export function systemdUnit(
  spec: ServiceSpec,
  configHome = posix.join(spec.home, '.config'),
): ServiceDefinition {
  const contents = [
    '[Unit]',
    'Description=Agent control plane endpoint agent',
    '',
    '[Service]',
    'Type=exec',
    `ExecStart=${spec.command.map(execArgument).join(' ')}`,
    'Restart=on-failure',
    'RestartSec=30',
    // SIGTERM asks the daemon to stop cleanly (it acknowledges what the service accepted, then exits).
    'KillSignal=SIGTERM',
    'TimeoutStopSec=20',
    'Nice=10',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
  return { path: posix.join(configHome, 'systemd', 'user', SERVICE_NAMES.systemd), contents };
}
