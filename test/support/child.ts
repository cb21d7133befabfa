// A Node.js child process run to its end, with what it printed (the infra tests load bundles in fresh processes).
import { spawn } from 'node:child_process';

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
