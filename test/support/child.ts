// Node.js child processes: one run to its end, with what it printed (the infra tests load bundles in fresh
// processes), and `npm start` (local-server/main.ts) left running, read as it prints.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ChildOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runNode(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<ChildOutcome> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stdout, stderr };
}

const MAIN = fileURLToPath(new URL('../../local-server/main.ts', import.meta.url));

export interface MainProcess {
  child: ChildProcess;
  /** All it has printed so far, stdout and stderr together. */
  output(): string;
  /** The first match of `pattern` in the output; throws once the child has exited or `timeoutMs` has passed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

/**
 * `npm start` in a child process: local-server/main.ts with `args`, and only PATH, TZ=UTC and `env` in its
 * environment. The caller stops it.
 */
export function startMain(args: readonly string[], env: Record<string, string>): MainProcess {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const waitFor = async (pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const m = pattern.exec(output);
      if (m) return m;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`did not see ${pattern} in:\n${output}`);
  };
  return { child, output: () => output, waitFor };
}
