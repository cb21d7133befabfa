// The keys of a launchd job and the type each takes, from launchd.plist(5) ("XML PROPERTY LIST KEYS"; the macOS
// manual page, as Xcode ships it). checkLaunchdJob validates a parsed plist against them: an unknown key or a value
// of the wrong type is an error, as launchctl would refuse or ignore it.

type PlistType =
  | 'string'
  | 'boolean'
  | 'integer'
  | 'array'
  | 'dictionary'
  | 'boolean|dictionary'
  | 'dictionary|array';

export const LAUNCHD_KEYS: Record<string, PlistType> = {
  Label: 'string',
  Disabled: 'boolean',
  UserName: 'string',
  GroupName: 'string',
  inetdCompatibility: 'dictionary',
  LimitLoadToHosts: 'array',
  LimitLoadFromHosts: 'array',
  LimitLoadToSessionType: 'string',
  LimitLoadToHardware: 'dictionary',
  LimitLoadFromHardware: 'dictionary',
  Program: 'string',
  ProgramArguments: 'array',
  EnableGlobbing: 'boolean',
  EnableTransactions: 'boolean',
  EnablePressuredExit: 'boolean',
  OnDemand: 'boolean',
  ServiceIPC: 'boolean',
  KeepAlive: 'boolean|dictionary',
  RunAtLoad: 'boolean',
  RootDirectory: 'string',
  WorkingDirectory: 'string',
  EnvironmentVariables: 'dictionary',
  Umask: 'integer',
  TimeOut: 'integer',
  ExitTimeOut: 'integer',
  ThrottleInterval: 'integer',
  InitGroups: 'boolean',
  WatchPaths: 'array',
  QueueDirectories: 'array',
  StartOnMount: 'boolean',
  StartInterval: 'integer',
  StartCalendarInterval: 'dictionary|array',
  StandardInPath: 'string',
  StandardOutPath: 'string',
  StandardErrorPath: 'string',
  Debug: 'boolean',
  WaitForDebugger: 'boolean',
  SoftResourceLimits: 'dictionary',
  HardResourceLimits: 'dictionary',
  Nice: 'integer',
  ProcessType: 'string',
  AbandonProcessGroup: 'boolean',
  LowPriorityIO: 'boolean',
  LowPriorityBackgroundIO: 'boolean',
  MaterializeDatalessFiles: 'boolean',
  LaunchOnlyOnce: 'boolean',
  MachServices: 'dictionary',
  Sockets: 'dictionary',
  LaunchEvents: 'dictionary',
  SessionCreate: 'boolean',
  AssociatedBundleIdentifiers: 'array',
};

/** launchd.plist(5), KeepAlive's dictionary form. */
const KEEP_ALIVE_KEYS = [
  'SuccessfulExit',
  'NetworkState',
  'PathState',
  'OtherJobEnabled',
  'Crashed',
  'AfterInitialDemand',
];

/** launchd.plist(5), ProcessType. */
const PROCESS_TYPES = ['Background', 'Standard', 'Adaptive', 'Interactive'];

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'real';
  if (typeof value === 'object' && value !== null) return 'dictionary';
  return typeof value;
}

/** The problems of a parsed launchd job (empty when it is a valid one). */
export function checkLaunchdJob(job: unknown): string[] {
  if (typeOf(job) !== 'dictionary') return [`the plist is a ${typeOf(job)}, not a dictionary`];
  const problems: string[] = [];
  const entries = Object.entries(job as Record<string, unknown>);
  for (const [key, value] of entries) {
    const expected = LAUNCHD_KEYS[key];
    if (!expected) {
      problems.push(`${key} is not a launchd.plist(5) key`);
      continue;
    }
    if (!expected.split('|').includes(typeOf(value)))
      problems.push(`${key} is a ${typeOf(value)}, not ${expected}`);
  }
  const j = job as Record<string, unknown>;
  if (typeof j.Label !== 'string' || !j.Label) problems.push('Label is required');
  if (j.Program === undefined && j.ProgramArguments === undefined)
    problems.push('Program or ProgramArguments is required');
  if (Array.isArray(j.ProgramArguments) && !j.ProgramArguments.every((a) => typeof a === 'string'))
    problems.push('ProgramArguments must hold strings');
  if (typeOf(j.KeepAlive) === 'dictionary') {
    for (const key of Object.keys(j.KeepAlive as object))
      if (!KEEP_ALIVE_KEYS.includes(key)) problems.push(`KeepAlive.${key} is not a KeepAlive key`);
  }
  if (j.ProcessType !== undefined && !PROCESS_TYPES.includes(j.ProcessType as string))
    problems.push(`ProcessType ${String(j.ProcessType)} is not one of ${PROCESS_TYPES.join(', ')}`);
  return problems;
}
