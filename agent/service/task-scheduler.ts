// Windows: a Task Scheduler task (the Task Scheduler schema, version 1.3) that starts the daemon at the user's logon
// and restarts it when it fails, registered with `schtasks /Create /XML`. The file is UTF-16 with a byte order mark,
// as `schtasks /Query /XML` writes it.
import { pathsOf, SERVICE_NAMES, type ServiceDefinition, type ServiceSpec } from './definition.ts';
import { xmlText } from './xml-text.ts';

/**
 * One argument as CommandLineToArgvW reads it back: quoted, a quote escaped with a backslash, and backslashes doubled
 * only where they precede a quote (including the closing one).
 */
export function windowsArgument(arg: string): string {
  if (arg && !/[\s"]/.test(arg)) return arg;
  return `"${arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}

export function scheduledTask(spec: ServiceSpec): ServiceDefinition {
  const [command = '', ...args] = spec.command;
  const user = spec.user ? [`<UserId>${xmlText(spec.user)}</UserId>`] : [];
  const lines = [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.3" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    '  <RegistrationInfo>',
    `    <URI>\\${SERVICE_NAMES.task}</URI>`,
    '    <Description>Agent control plane endpoint agent: reports AI agents, MCP servers and tool calls.</Description>',
    '  </RegistrationInfo>',
    '  <Triggers>',
    '    <LogonTrigger>',
    '      <Enabled>true</Enabled>',
    ...user.map((l) => `      ${l}`),
    '    </LogonTrigger>',
    '  </Triggers>',
    '  <Principals>',
    '    <Principal id="Author">',
    ...user.map((l) => `      ${l}`),
    '      <LogonType>InteractiveToken</LogonType>',
    '      <RunLevel>LeastPrivilege</RunLevel>',
    '    </Principal>',
    '  </Principals>',
    '  <Settings>',
    '    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>',
    // A laptop on battery is still a laptop whose tool calls must be reported.
    '    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>',
    '    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>',
    '    <StartWhenAvailable>true</StartWhenAvailable>',
    '    <AllowStartOnDemand>true</AllowStartOnDemand>',
    '    <Enabled>true</Enabled>',
    // PT0S: no time limit (the default stops a task after 72 hours).
    '    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>',
    '    <Priority>7</Priority>',
    '    <RestartOnFailure>',
    '      <Interval>PT1M</Interval>',
    '      <Count>255</Count>',
    '    </RestartOnFailure>',
    '    <IdleSettings>',
    '      <StopOnIdleEnd>false</StopOnIdleEnd>',
    '      <RestartOnIdle>false</RestartOnIdle>',
    '    </IdleSettings>',
    '  </Settings>',
    '  <Actions Context="Author">',
    '    <Exec>',
    `      <Command>${xmlText(command)}</Command>`,
    `      <Arguments>${xmlText(args.map(windowsArgument).join(' '))}</Arguments>`,
    `      <WorkingDirectory>${xmlText(spec.stateDir)}</WorkingDirectory>`,
    '    </Exec>',
    '  </Actions>',
    '</Task>',
    '',
  ];
  const text = lines.join('\r\n');
  return {
    path: pathsOf('win32').join(spec.stateDir, `${SERVICE_NAMES.task}.task.xml`),
    contents: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
  };
}
