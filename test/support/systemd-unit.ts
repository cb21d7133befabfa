// A strict reader of systemd unit files, written from systemd's own documentation, so that a test can check a unit
// on a machine without systemd (the fresh-machine rule: no Debian package needed):
// - syntax: systemd.syntax(7) (sections, `Key=Value`, comments, line continuation, quoting and C escapes);
// - the directives each section takes: systemd.unit(5) ([Unit], [Install]), systemd.service(5) ([Service]), and the
//   ones [Service] takes from systemd.exec(5) and systemd.kill(5); the names checked against systemd's parser table
//   (src/core/load-fragment-gperf.gperf.in in systemd/systemd);
// - command lines: systemd.service(5) "Command lines" (prefixes, quoting, `%` specifiers, `$` variables);
// - time spans: systemd.time(7).
// Anything else is an error: an unknown section or directive, a bad value for a checked one, a malformed line.

const CONDITIONS = [
  'Architecture',
  'Firmware',
  'Virtualization',
  'Host',
  'KernelCommandLine',
  'KernelVersion',
  'Credential',
  'Environment',
  'Security',
  'Capability',
  'ACPower',
  'NeedsUpdate',
  'FirstBoot',
  'PathExists',
  'PathExistsGlob',
  'PathIsDirectory',
  'PathIsSymbolicLink',
  'PathIsMountPoint',
  'PathIsReadWrite',
  'PathIsEncrypted',
  'DirectoryNotEmpty',
  'FileNotEmpty',
  'FileIsExecutable',
  'User',
  'Group',
  'ControlGroupController',
  'Memory',
  'CPUs',
  'CPUFeature',
  'OSRelease',
  'MemoryPressure',
  'CPUPressure',
  'IOPressure',
];

/** systemd.unit(5), "[Unit] Section Options" (with "Conditions and Asserts"). */
const UNIT = [
  'Description',
  'Documentation',
  'Wants',
  'Requires',
  'Requisite',
  'BindsTo',
  'PartOf',
  'Upholds',
  'Conflicts',
  'Before',
  'After',
  'OnFailure',
  'OnSuccess',
  'PropagatesReloadTo',
  'ReloadPropagatedFrom',
  'PropagatesStopTo',
  'StopPropagatedFrom',
  'JoinsNamespaceOf',
  'RequiresMountsFor',
  'WantsMountsFor',
  'OnFailureJobMode',
  'IgnoreOnIsolate',
  'StopWhenUnneeded',
  'RefuseManualStart',
  'RefuseManualStop',
  'AllowIsolate',
  'DefaultDependencies',
  'SurviveFinalKillSignal',
  'CollectMode',
  'FailureAction',
  'SuccessAction',
  'FailureActionExitStatus',
  'SuccessActionExitStatus',
  'JobTimeoutSec',
  'JobRunningTimeoutSec',
  'JobTimeoutAction',
  'JobTimeoutRebootArgument',
  'StartLimitIntervalSec',
  'StartLimitBurst',
  'StartLimitAction',
  'RebootArgument',
  'SourcePath',
  ...CONDITIONS.map((c) => `Condition${c}`),
  ...CONDITIONS.map((c) => `Assert${c}`),
];

/** systemd.unit(5), "[Install] Section Options". */
const INSTALL = ['Alias', 'WantedBy', 'RequiredBy', 'UpheldBy', 'Also', 'DefaultInstance'];

/** systemd.service(5), "Options". */
const SERVICE = [
  'Type',
  'ExitType',
  'RemainAfterExit',
  'GuessMainPID',
  'PIDFile',
  'BusName',
  'ExecStart',
  'ExecStartPre',
  'ExecStartPost',
  'ExecCondition',
  'ExecReload',
  'ExecStop',
  'ExecStopPost',
  'RestartSec',
  'RestartSteps',
  'RestartMaxDelaySec',
  'TimeoutStartSec',
  'TimeoutStopSec',
  'TimeoutAbortSec',
  'TimeoutSec',
  'TimeoutStartFailureMode',
  'TimeoutStopFailureMode',
  'RuntimeMaxSec',
  'RuntimeRandomizedExtraSec',
  'WatchdogSec',
  'Restart',
  'RestartMode',
  'SuccessExitStatus',
  'RestartPreventExitStatus',
  'RestartForceExitStatus',
  'RootDirectoryStartOnly',
  'NonBlocking',
  'NotifyAccess',
  'Sockets',
  'FileDescriptorStoreMax',
  'FileDescriptorStorePreserve',
  'USBFunctionDescriptors',
  'USBFunctionStrings',
  'OOMPolicy',
  'OpenFile',
  'ReloadSignal',
];

/** systemd.kill(5), "Options". */
const KILL = [
  'KillMode',
  'KillSignal',
  'RestartKillSignal',
  'SendSIGHUP',
  'SendSIGKILL',
  'FinalKillSignal',
  'WatchdogSignal',
];

/** systemd.exec(5): the process-context directives (the EXEC_CONTEXT_CONFIG_ITEMS of systemd's parser table). */
const EXEC = [
  'WorkingDirectory',
  'RootDirectory',
  'RootImage',
  'RootImageOptions',
  'RootImagePolicy',
  'RootHash',
  'RootHashSignature',
  'RootVerity',
  'RootEphemeral',
  'ExtensionDirectories',
  'ExtensionImages',
  'ExtensionImagePolicy',
  'MountImages',
  'MountImagePolicy',
  'User',
  'Group',
  'SupplementaryGroups',
  'SetLoginEnvironment',
  'Nice',
  'OOMScoreAdjust',
  'CoredumpFilter',
  'IOSchedulingClass',
  'IOSchedulingPriority',
  'CPUSchedulingPolicy',
  'CPUSchedulingPriority',
  'CPUSchedulingResetOnFork',
  'CPUAffinity',
  'NUMAPolicy',
  'NUMAMask',
  'UMask',
  'Environment',
  'EnvironmentFile',
  'PassEnvironment',
  'UnsetEnvironment',
  'DynamicUser',
  'RemoveIPC',
  'StandardInput',
  'StandardOutput',
  'StandardError',
  'StandardInputText',
  'StandardInputData',
  'TTYPath',
  'TTYReset',
  'TTYVHangup',
  'TTYVTDisallocate',
  'TTYRows',
  'TTYColumns',
  'SyslogIdentifier',
  'SyslogFacility',
  'SyslogLevel',
  'SyslogLevelPrefix',
  'LogLevelMax',
  'LogRateLimitIntervalSec',
  'LogRateLimitBurst',
  'LogExtraFields',
  'LogFilterPatterns',
  'SecureBits',
  'CapabilityBoundingSet',
  'AmbientCapabilities',
  'TimerSlackNSec',
  'NoNewPrivileges',
  'KeyringMode',
  'ProtectProc',
  'ProcSubset',
  'SystemCallFilter',
  'SystemCallArchitectures',
  'SystemCallErrorNumber',
  'SystemCallLog',
  'MemoryDenyWriteExecute',
  'RestrictNamespaces',
  'RestrictRealtime',
  'RestrictSUIDSGID',
  'RestrictAddressFamilies',
  'LockPersonality',
];

export const SECTIONS: Record<string, ReadonlySet<string>> = {
  Unit: new Set(UNIT),
  Service: new Set([...SERVICE, ...KILL, ...EXEC]),
  Install: new Set(INSTALL),
};

export interface UnitEntry {
  section: string;
  key: string;
  value: string;
  line: number;
}

export class UnitSyntaxError extends Error {}

/** The entries of a unit file, each checked against the documented directives of its section. */
export function parseUnit(text: string): UnitEntry[] {
  const entries: UnitEntry[] = [];
  const lines = text.split('\n');
  let section: string | undefined;
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = (lines[i] as string).replace(/\r$/, '');
    // A line ending in a backslash continues on the next (systemd.syntax(7)); comment lines inside are skipped.
    while (line.endsWith('\\') && i + 1 < lines.length) {
      let next = (lines[++i] as string).replace(/\r$/, '');
      while (/^\s*[#;]/.test(next) && i + 1 < lines.length) next = (lines[++i] as string).replace(/\r$/, '');
      line = `${line.slice(0, -1)} ${next}`;
    }
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[([^[\]]+)\]$/.exec(trimmed);
    if (header) {
      section = header[1] as string;
      if (!SECTIONS[section]) throw new UnitSyntaxError(`line ${start}: unknown section [${section}]`);
      if (seen.has(section)) throw new UnitSyntaxError(`line ${start}: section [${section}] appears twice`);
      seen.add(section);
      continue;
    }
    const entry = /^([A-Za-z0-9-]+)\s*=\s*(.*)$/.exec(trimmed);
    if (!entry)
      throw new UnitSyntaxError(`line ${start}: neither a section, a comment nor Key=Value: ${trimmed}`);
    if (!section) throw new UnitSyntaxError(`line ${start}: ${entry[1]}= before any section`);
    const key = entry[1] as string;
    if (!SECTIONS[section]?.has(key))
      throw new UnitSyntaxError(`line ${start}: ${key}= is not a directive of [${section}]`);
    entries.push({ section, key, value: entry[2] as string, line: start });
  }
  return entries;
}

const C_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
  s: ' ',
};

/**
 * The argv a command line stands for (systemd.service(5) "Command lines"): the prefixes stripped, words split on
 * whitespace, quotes removed, C escapes decoded, `%%` and `$$` undoubled. A `%` specifier or a `$` variable left in
 * is an error here, since the agent's command must reach the daemon unchanged.
 */
export function commandLine(value: string): { prefixes: string; argv: string[] } {
  const prefixes = /^[-@:+!]*/.exec(value)?.[0] ?? '';
  const argv: string[] = [];
  let i = prefixes.length;
  const text = value;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    if (i >= text.length) break;
    let word = '';
    while (i < text.length && !/\s/.test(text[i] as string)) {
      const ch = text[i] as string;
      if (ch === '"' || ch === "'") {
        const quote = ch;
        i++;
        while (i < text.length && text[i] !== quote) {
          if (text[i] === '\\') {
            const esc = text[i + 1] as string;
            if (esc in C_ESCAPES) {
              word += C_ESCAPES[esc];
              i += 2;
              continue;
            }
            throw new UnitSyntaxError(`unknown escape \\${esc} in ${value}`);
          }
          word += specifier(text, i);
          i += text[i] === '%' || text[i] === '$' ? 2 : 1;
        }
        if (text[i] !== quote) throw new UnitSyntaxError(`unterminated quote in ${value}`);
        i++;
        continue;
      }
      if (ch === '\\') {
        const esc = text[i + 1] as string;
        if (!(esc in C_ESCAPES)) throw new UnitSyntaxError(`unknown escape \\${esc} in ${value}`);
        word += C_ESCAPES[esc];
        i += 2;
        continue;
      }
      word += specifier(text, i);
      i += ch === '%' || ch === '$' ? 2 : 1;
    }
    argv.push(word);
  }
  return { prefixes, argv };
}

function specifier(text: string, i: number): string {
  const ch = text[i] as string;
  if (ch === '%') {
    if (text[i + 1] === '%') return '%';
    throw new UnitSyntaxError(`specifier %${text[i + 1] ?? ''} would be expanded by systemd in ${text}`);
  }
  if (ch === '$') {
    if (text[i + 1] === '$') return '$';
    throw new UnitSyntaxError(`$${text[i + 1] ?? ''}… would be expanded as a variable by systemd in ${text}`);
  }
  return ch;
}

const TIME_UNITS =
  /^(usec|us|µs|msec|ms|seconds|second|sec|s|minutes|minute|min|m|hours|hour|hr|h|days|day|d|weeks|week|w|months|month|M|years|year|y)$/;

/** A time span of systemd.time(7): `infinity`, or numbers each with an optional unit (seconds by default). */
export function isTimeSpan(value: string): boolean {
  if (value.trim() === 'infinity') return true;
  const parts = value.trim().split(/\s+/);
  return (
    parts.length > 0 &&
    parts.every((part) => {
      const m = /^(\d+(?:\.\d+)?)([a-zµ]*)$/i.exec(part);
      return !!m && (m[2] === '' || TIME_UNITS.test(m[2] as string));
    })
  );
}
