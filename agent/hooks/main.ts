// The hook command: `<node> <agent> hook --client <id> --event <name> [--state <dir>]`, run by the client for each
// hook event with the payload on stdin. Synchronous from start to end and importing only Node built-ins, this folder
// and the policy's evaluator (shared/policy/rules.ts, which imports nothing), so that it adds little more
// than Node's own start to a tool call. Exits 0 whatever happens, unless the
// decision itself is a block that the client takes as an exit code.
import { readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { logHookError } from './error-log.ts';
import { handleHook } from './handle.ts';

export interface HookArgs {
  client: string;
  event: string;
  stateDir: string;
}

const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** The user's ~/.acp-agent (node:os loaded only when the command does not name the state directory). */
const defaultStateDir = (): string => join(process.getBuiltinModule('node:os').homedir(), '.acp-agent');
const pause = new Int32Array(new SharedArrayBuffer(4));

export function parseHookArgs(argv: readonly string[]): HookArgs {
  const args = argv[0] === 'hook' ? argv.slice(1) : argv;
  const values: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!['--client', '--event', '--state'].includes(name)) throw new Error(`unknown argument ${arg}`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '') throw new Error(`${name} needs a value`);
    values[name.slice(2)] = value;
  }
  if (!values.client || !values.event) throw new Error('hook needs --client and --event');
  return {
    client: values.client,
    event: values.event,
    stateDir: values.state ?? defaultStateDir(),
  };
}

/** All of stdin, read synchronously (a non-blocking pipe is waited on in 1 ms steps, for 5 s at most). */
export function readStdinSync(): string {
  const chunks: Buffer[] = [];
  let total = 0;
  const deadline = Date.now() + 5000;
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' && Date.now() < deadline) {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      if (code === 'EOF') break;
      throw err;
    }
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > MAX_PAYLOAD_BYTES) throw new Error(`the payload is larger than ${MAX_PAYLOAD_BYTES} bytes`);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

function write(fd: 1 | 2, text: string | undefined): void {
  if (!text) return;
  try {
    writeSync(fd, text);
  } catch {
    // The client stopped listening; nothing to do about it.
  }
}

export function runHookProcess(argv: readonly string[]): void {
  let args: HookArgs;
  try {
    args = parseHookArgs(argv);
  } catch (err) {
    logHookError(defaultStateDir(), 'hook', (err as Error).message);
    process.exitCode = 0;
    return;
  }
  let stdin = '';
  try {
    stdin = readStdinSync();
  } catch (err) {
    logHookError(args.stateDir, `${args.client} ${args.event}`, `reading stdin: ${(err as Error).message}`);
  }
  const answer = handleHook({ clientId: args.client, event: args.event, stateDir: args.stateDir, stdin });
  write(1, answer.stdout);
  write(2, answer.stderr);
  process.exitCode = answer.exitCode;
}
