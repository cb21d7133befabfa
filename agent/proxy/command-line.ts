// The proxy's command line, `<agent> mcp-proxy --client <id> --server <name> [--state <dir>] -- <command> [args…]`:
// built here for the install, parsed here for the proxy, and recognized here in a client's config entry (the scan
// reports a wrapped server by its original command; the uninstall puts that command back).
import { fileURLToPath } from 'node:url';

export const PROXY_COMMAND = 'mcp-proxy';

export interface ProxyArgs {
  client: string;
  server: string;
  stateDir?: string;
  /** The wrapped server's own command and arguments. */
  command: string;
  args: string[];
}

/** The arguments after the agent's entry file, as the client's config holds them. */
export function proxyArgv(args: ProxyArgs): string[] {
  return [
    PROXY_COMMAND,
    '--client',
    args.client,
    '--server',
    args.server,
    ...(args.stateDir ? ['--state', args.stateDir] : []),
    '--',
    args.command,
    ...args.args,
  ];
}

const OPTIONS = new Set(['--client', '--server', '--state']);

/** The proxy's arguments (from `mcp-proxy` on), or an error naming what is wrong; never echoes the server's command. */
export function parseProxyArgv(argv: readonly string[]): ProxyArgs {
  const start = argv[0] === PROXY_COMMAND ? 1 : 0;
  const values: Record<string, string> = {};
  let i = start;
  for (; i < argv.length && argv[i] !== '--'; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!OPTIONS.has(name)) throw new Error(`mcp-proxy: unknown argument ${JSON.stringify(arg)} before --`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw new Error(`mcp-proxy: ${name} needs a value`);
    values[name.slice(2)] = value;
  }
  const command = argv[i + 1];
  if (argv[i] !== '--' || command === undefined || command === '')
    throw new Error(
      'mcp-proxy: the server to run goes after --: mcp-proxy --client ID --server NAME -- <command> [args…]',
    );
  if (!values.client || !values.server) throw new Error('mcp-proxy: --client and --server are required');
  return {
    client: values.client,
    server: values.server,
    ...(values.state ? { stateDir: values.state } : {}),
    command,
    args: argv.slice(i + 2) as string[],
  };
}

/**
 * The proxy's arguments when a config entry's args are the agent's proxy wrapping a server, else undefined. What
 * precedes `mcp-proxy` is the agent's entry file (the entry's command being Node.js).
 */
export function wrappedServer(args: readonly string[] | undefined): ProxyArgs | undefined {
  if (!args) return undefined;
  const at = args.indexOf(PROXY_COMMAND);
  if (at < 0 || at > 1 || !args.includes('--')) return undefined;
  try {
    return parseProxyArgv(args.slice(at));
  } catch {
    return undefined;
  }
}

/**
 * The file a wrapped config runs: the proxy's own entry when the agent runs from its sources, else the agent's
 * single file (`<agent> mcp-proxy …`), which dispatches `mcp-proxy` before loading anything else.
 */
export function defaultProxyEntry(): string {
  const here = import.meta.url as string | undefined;
  if (here?.endsWith('.ts')) return fileURLToPath(new URL('./entry.ts', here));
  return process.argv[1] ?? 'acp-agent';
}
