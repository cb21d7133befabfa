// The source identity of an MCP server, derived on the laptop from its command line or URL: what an admin needs to
// tell the official `github` server from a fork of the same name, and nothing more. It never carries an argument
// other than the package or image reference, an env value, a URL path or query, or a directory.
//
// - npm: `npx`, `npm exec` / `npm x`, `pnpm dlx`, `pnpx`, `yarn dlx`, `bunx` / `bun x` → the package, its version
//   when pinned to an exact one;
// - pypi: `uvx`, `uv tool run`, `pipx run` → the package (PEP 503 normalised), its version when pinned;
// - oci: `docker run`, `podman run` → the image, its tag or digest;
// - remote: the URL's origin (scheme, host, port);
// - executable: otherwise, the command's base name.
// A reference that is not a well-formed package or image name (a URL, a path, a git spec) is not sent: the
// identity falls back to the launcher's name.
import type { ServerEntry, SourceIdentity } from './types.ts';

/** The base name of a command, whatever the OS wrote: `C:\\tools\\npx.cmd` → `npx`. */
export function commandBaseName(command: string): string {
  const base = command.trim().split(/[\\/]/).pop() ?? '';
  return base.replace(/\.(exe|cmd|bat|ps1)$/i, '') || base;
}

const NPM_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const PYPI_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const EXACT_VERSION = /^v?\d+(\.\d+){0,3}([-+][0-9A-Za-z.-]+)?$/;
const IMAGE_NAME =
  /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:\d+)?\/)?[a-z0-9]+([._-]+[a-z0-9]+)*(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*$/;
const IMAGE_TAG = /^[\w][\w.-]{0,127}$/;
const IMAGE_DIGEST = /^[a-z0-9]+([+._-][a-z0-9]+)*:[a-fA-F0-9]{32,}$/;

/** Options that take a value, per launcher (the value is skipped, never read as the package). */
const NPX_VALUE_FLAGS = new Set([
  '-p',
  '--package',
  '-c',
  '--call',
  '--registry',
  '--cache',
  '--userconfig',
  '-w',
  '--workspace',
]);
const UVX_VALUE_FLAGS = new Set([
  '--from',
  '--with',
  '-w',
  '--with-editable',
  '--with-requirements',
  '-p',
  '--python',
  '-c',
  '--constraints',
  '--overrides',
  '--index',
  '--default-index',
  '-i',
  '--index-url',
  '--extra-index-url',
  '-f',
  '--find-links',
  '--index-strategy',
  '--keyring-provider',
  '--resolution',
  '--prerelease',
  '--exclude-newer',
  '--cache-dir',
  '--python-preference',
  '--directory',
  '--project',
  '--config-file',
  '--color',
  '--env-file',
  '--refresh-package',
  '--reinstall-package',
  '--upgrade-package',
  '-P',
  '--no-binary-package',
  '--no-build-package',
  '--link-mode',
  '--compile-bytecode',
  '--config-setting',
  '-C',
  '--allow-insecure-host',
  '--trusted-host',
]);
const PIPX_VALUE_FLAGS = new Set(['--spec', '--python', '--pip-args', '--index-url', '-i', '--fetch-python']);
const DOCKER_VALUE_FLAGS = new Set([
  '-a',
  '--attach',
  '--add-host',
  '--annotation',
  '--blkio-weight',
  '--blkio-weight-device',
  '--cap-add',
  '--cap-drop',
  '--cgroup-parent',
  '--cgroupns',
  '--cidfile',
  '--cpu-period',
  '--cpu-quota',
  '--cpu-rt-period',
  '--cpu-rt-runtime',
  '-c',
  '--cpu-shares',
  '--cpus',
  '--cpuset-cpus',
  '--cpuset-mems',
  '--device',
  '--device-cgroup-rule',
  '--device-read-bps',
  '--device-read-iops',
  '--device-write-bps',
  '--device-write-iops',
  '--dns',
  '--dns-option',
  '--dns-search',
  '--domainname',
  '--entrypoint',
  '-e',
  '--env',
  '--env-file',
  '--expose',
  '--gpus',
  '--group-add',
  '--health-cmd',
  '--health-interval',
  '--health-retries',
  '--health-start-interval',
  '--health-start-period',
  '--health-timeout',
  '-h',
  '--hostname',
  '--ip',
  '--ip6',
  '--ipc',
  '--isolation',
  '--kernel-memory',
  '-l',
  '--label',
  '--label-file',
  '--link',
  '--link-local-ip',
  '--log-driver',
  '--log-opt',
  '--mac-address',
  '-m',
  '--memory',
  '--memory-reservation',
  '--memory-swap',
  '--memory-swappiness',
  '--mount',
  '--name',
  '--network',
  '--net',
  '--network-alias',
  '--oom-score-adj',
  '--pid',
  '--pids-limit',
  '--platform',
  '-p',
  '--publish',
  '--pull',
  '--restart',
  '--runtime',
  '--security-opt',
  '--shm-size',
  '--stop-signal',
  '--stop-timeout',
  '--storage-opt',
  '--sysctl',
  '--tmpfs',
  '--ulimit',
  '-u',
  '--user',
  '--userns',
  '--uts',
  '-v',
  '--volume',
  '--volume-driver',
  '--volumes-from',
  '-w',
  '--workdir',
  '--secret',
  '--arch',
  '--os',
  '--variant',
  '--authfile',
  '--cert-dir',
  '--creds',
  '--decryption-key',
  '--hooks-dir',
  '--pod',
  '--pod-id-file',
  '--requires',
  '--sdnotify',
  '--seccomp-policy',
  '--subgidname',
  '--subuidname',
  '--timezone',
  '--umask',
  '--uidmap',
  '--gidmap',
]);

/** The first operand after the options, skipping the values of options that take one. */
function firstOperand(
  args: readonly string[],
  valueFlags: ReadonlySet<string>,
): { operand?: string; rest: string[] } {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return { operand: args[i + 1], rest: args.slice(i + 2) };
    if (arg.startsWith('-')) {
      if (!arg.includes('=') && valueFlags.has(arg)) i++;
      continue;
    }
    return { operand: arg, rest: args.slice(i + 1) };
  }
  return { rest: [] };
}

/** The value of `--flag value` or `--flag=value`, the last one given. */
function optionValue(args: readonly string[], flags: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') break;
    for (const flag of flags) {
      if (arg === flag) value = args[i + 1];
      else if (arg.startsWith(`${flag}=`)) value = arg.slice(flag.length + 1);
    }
  }
  return value;
}

function npmPackage(spec: string): { name: string; version?: string } | undefined {
  const at = spec.indexOf('@', 1);
  const name = at === -1 ? spec : spec.slice(0, at);
  const version = at === -1 ? undefined : spec.slice(at + 1);
  if (!NPM_NAME.test(name) || name.length > 214) return undefined;
  return version && EXACT_VERSION.test(version) ? { name, version } : { name };
}

function pypiPackage(spec: string): { name: string; version?: string } | undefined {
  const match = /^([^=<>~!@[\s;]+)(\[[^\]]*\])?\s*(?:(==|@)\s*([^\s;,]+))?/.exec(spec);
  const name = match?.[1];
  if (!name || !PYPI_NAME.test(name)) return undefined;
  const rest = spec.slice(match[0].length).trim();
  const normalised = name.toLowerCase().replace(/[-_.]+/g, '-');
  const version = match[4];
  return version && !rest && EXACT_VERSION.test(version)
    ? { name: normalised, version }
    : { name: normalised };
}

function ociImage(reference: string): { name: string; version?: string } | undefined {
  const at = reference.indexOf('@');
  let name = at === -1 ? reference : reference.slice(0, at);
  let version = at === -1 ? undefined : reference.slice(at + 1);
  if (version !== undefined && !IMAGE_DIGEST.test(version)) return undefined;
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    const tag = name.slice(colon + 1);
    if (!IMAGE_TAG.test(tag)) return undefined;
    version ??= tag;
    name = name.slice(0, colon);
  }
  if (!IMAGE_NAME.test(name) || name.length > 255) return undefined;
  return version ? { name, version } : { name };
}

/** The origin of a URL (scheme, host, port): never its user, password, path, query or fragment. */
export function urlOrigin(url: string): string | undefined {
  try {
    const parsed = new URL(url.trim());
    if (!/^(https?|wss?):$/.test(parsed.protocol) || !parsed.host) return undefined;
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return undefined;
  }
}

const executable = (command: string): SourceIdentity => ({
  type: 'executable',
  name: commandBaseName(command) || '(none)',
});

/** The source identity of a stdio command line (property-tested: test/unit/agent/source-identity.test.ts). */
export function commandSource(command: string, args: readonly string[] = []): SourceIdentity {
  const launcher = commandBaseName(command).toLowerCase();
  const fallback = executable(command);
  // Windows configs start npx through the shell: `cmd /c npx -y pkg`.
  if (launcher === 'cmd' && args[0] && /^\/[ck]$/i.test(args[0]) && args[1]) {
    return commandSource(args[1], args.slice(2));
  }
  const npm = (operands: readonly string[], flags = NPX_VALUE_FLAGS): SourceIdentity => {
    const spec = optionValue(operands, ['-p', '--package']) ?? firstOperand(operands, flags).operand;
    const pkg = spec ? npmPackage(spec) : undefined;
    return pkg ? { type: 'npm', ...pkg } : fallback;
  };
  const pypi = (spec: string | undefined): SourceIdentity => {
    const pkg = spec ? pypiPackage(spec) : undefined;
    return pkg ? { type: 'pypi', ...pkg } : fallback;
  };
  switch (launcher) {
    case 'npx':
    case 'pnpx':
    case 'bunx':
      return npm(args);
    case 'npm':
    case 'pnpm':
    case 'yarn':
    case 'bun': {
      const verb = args[0];
      const runs = launcher === 'npm' ? ['exec', 'x'] : launcher === 'bun' ? ['x'] : ['dlx'];
      return verb && runs.includes(verb) ? npm(args.slice(1)) : fallback;
    }
    case 'uvx':
      return pypi(optionValue(args, ['--from']) ?? firstOperand(args, UVX_VALUE_FLAGS).operand);
    case 'uv': {
      const tool = args[0] === 'tool' && args[1] === 'run' ? args.slice(2) : undefined;
      return tool
        ? pypi(optionValue(tool, ['--from']) ?? firstOperand(tool, UVX_VALUE_FLAGS).operand)
        : fallback;
    }
    case 'pipx':
      return args[0] === 'run'
        ? pypi(
            optionValue(args.slice(1), ['--spec']) ?? firstOperand(args.slice(1), PIPX_VALUE_FLAGS).operand,
          )
        : fallback;
    case 'docker':
    case 'podman': {
      const run =
        args[0] === 'run'
          ? args.slice(1)
          : args[0] === 'container' && args[1] === 'run'
            ? args.slice(2)
            : undefined;
      const image = run ? firstOperand(run, DOCKER_VALUE_FLAGS).operand : undefined;
      const ref = image ? ociImage(image) : undefined;
      return ref ? { type: 'oci', ...ref } : fallback;
    }
    default:
      return fallback;
  }
}

/** The inventory's bounds on an identity (docs/device-protocol.md): a longer version is left out, a longer name cut. */
const MAX_NAME = 300;
const MAX_VERSION = 128;

function bounded(source: SourceIdentity): SourceIdentity {
  const { version, ...rest } = source;
  const name = rest.name.length > MAX_NAME ? `${rest.name.slice(0, MAX_NAME - 1)}…` : rest.name;
  return version && version.length <= MAX_VERSION ? { ...rest, name, version } : { ...rest, name };
}

/** The source identity of a server entry: its URL's origin if remote, else its command line's. */
export function sourceOf(entry: Pick<ServerEntry, 'transport' | 'command' | 'args' | 'url'>): SourceIdentity {
  if (entry.command) return bounded(commandSource(entry.command, entry.args ?? []));
  if (entry.url !== undefined)
    return bounded({ type: 'remote', name: urlOrigin(entry.url) ?? '(not a URL)' });
  return { type: 'executable', name: '(none)' };
}
