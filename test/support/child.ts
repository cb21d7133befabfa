// Child processes: one run to its end, with what it printed (the infra tests load bundles in fresh processes, the
// hook tests run hook commands through a shell), and `npm start` (local-server/main.ts) left running, read as it prints.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadState } from '#agent/identity.ts';

export interface ChildOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runNode(
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<ChildOutcome> {
  return runProcess(process.execPath, args, options);
}

/** Runs a program to its end, with `input` (if any) on its stdin. */
export async function runProcess(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<ChildOutcome> {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdin.end(options.input);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
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
  const waitFor = async (pattern: RegExp, timeoutMs = 90_000): Promise<RegExpExecArray> => {
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

export interface AgentCliRun {
  child: ChildProcess;
  /** Its exit code, listened for from the start: a CLI that finishes before the test awaits it is not missed. */
  exited: Promise<number | null>;
  /** The first match of `pattern` in what it printed; throws after 30 s. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  output(): string;
}

/**
 * `npm run agent -- <args>` (agent/cli.ts) in a child process, read as it prints (stdout and stderr together), with
 * only PATH, TZ=UTC and `env` in its environment.
 */
export function runAgentCli(args: readonly string[], env: Record<string, string> = {}): AgentCliRun {
  const child = spawn(process.execPath, ['agent/cli.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let output = '';
  const collect = (d: Buffer) => {
    output += d.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const waitFor = async (pattern: RegExp) => {
    for (let i = 0; i < 600; i++) {
      const m = pattern.exec(output);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${pattern} in CLI output:\n${output}`);
  };
  return { child, exited, waitFor, output: () => output };
}

/** Fills the service at `url` with `devices` simulated devices and their `events` (`agent simulate`, as `admin`). */
export async function simulateFleet(
  url: string,
  admin: { email: string; password: string },
  size: { devices: number; events: number },
): Promise<void> {
  const simulate = runAgentCli(
    [
      'simulate',
      '--url',
      url,
      '--email',
      admin.email,
      '--devices',
      String(size.devices),
      '--events',
      String(size.events),
    ],
    { ACP_PASSWORD: admin.password },
  );
  assert.equal(await simulate.exited, 0, simulate.output());
}

/** What an agent asked for at authorize, as the approval page should show it: its client_id and loopback host:port. */
export interface AgentAsked {
  clientId: string;
  loopback: string;
}

/**
 * `agent login --no-browser` with a fresh state directory, up to the moment it prints the address a person opens
 * (the service's /v1/auth/cli/authorize, which sends the browser to the dashboard's approval page); and what that
 * address asks for, read from it.
 */
export async function startAgentLogin(
  apiUrl: string,
): Promise<{ login: AgentCliRun; url: string; state: string; asked: AgentAsked }> {
  const state = mkdtempSync(join(tmpdir(), 'acp-agent-'));
  const login = runAgentCli(['login', '--url', apiUrl, '--state', state, '--no-browser']);
  const [, url] = await login.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1\/auth\/cli\/authorize\?\S+)/);
  const authorize = new URL(url as string);
  const redirect = new URL(authorize.searchParams.get('redirect_uri') ?? '');
  assert.match(redirect.host, /^127\.0\.0\.1:\d+$/, 'the agent listens on a loopback port');
  const asked = { clientId: authorize.searchParams.get('client_id') ?? '', loopback: redirect.host };
  assert.ok(asked.clientId, `the agent sends a client_id: ${url}`);
  return { login, url: url as string, state, asked };
}

/** Once the person refused: the login ends at once, non-zero, saying so, and keeps no token. */
export async function assertAgentLoginRefused(login: AgentCliRun, state: string): Promise<void> {
  await login.waitFor(/sign-in refused in the browser/);
  assert.equal(await login.exited, 1, login.output());
  assert.match(login.output(), /^error: sign-in refused in the browser$/m);
  assert.doesNotMatch(login.output(), /Signed in/);
  assert.equal(loadState(state).accessToken, undefined, 'no token is kept');
}

/** Once the person approved: the login ends signed in, and `agent register` enrolls with its token; the device ID. */
export async function finishAgentLoginAndRegister(
  login: AgentCliRun,
  apiUrl: string,
  state: string,
): Promise<string> {
  await login.waitFor(/Signed in; token valid/);
  assert.equal(await login.exited, 0, login.output());
  const register = runAgentCli(['register', '--url', apiUrl, '--state', state]);
  const [, deviceId] = await register.waitFor(/Registered: device ([0-9a-f-]{36})/);
  assert.equal(await register.exited, 0, register.output());
  return deviceId as string;
}
