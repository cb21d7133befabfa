// `agent mcp-proxy --client ID --server NAME [--state DIR] -- <command> [args…]`: what a client's config runs instead
// of a stdio MCP server once the server is opted in (docs/endpoint-agent.md, "Proxy mode"). It starts the server
// with the environment the client gave it, relays stdin and stdout through McpProxy, leaves stderr to the server
// (the client logs it), forwards the signals that stop it and exits with the server's code. It never prints the
// server's command, arguments or environment: they may hold secrets, and the client logs what a server prints.

import type { ChildProcessByStdio } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import crossSpawn from 'cross-spawn';
import { sourceOf } from '../discovery/source-identity.ts';
import { logHookError } from '../hooks/error-log.ts';
import { parseProxyArgv } from './command-line.ts';
import { McpProxy } from './proxy.ts';

export function runProxyProcess(argv: readonly string[]): void {
  let args: ReturnType<typeof parseProxyArgv>;
  try {
    args = parseProxyArgv(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const stateDir = args.stateDir ?? join(homedir(), '.acp-agent');
  const source = sourceOf({ transport: 'stdio', command: args.command, args: args.args });
  // cross-spawn, as the MCP SDK's own stdio transport: on Windows it finds `npx` as npx.cmd through PATHEXT and
  // quotes the arguments for cmd.exe, which child_process.spawn does not; elsewhere it is child_process.spawn.
  const child = crossSpawn(args.command, args.args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    windowsHide: true,
  }) as ChildProcessByStdio<Writable, Readable, null>;
  const proxy = new McpProxy(
    { stateDir, clientId: args.client, server: args.server, source: `${source.type}:${source.name}` },
    (bytes) => child.stdin.write(bytes),
    (bytes) => process.stdout.write(bytes),
  );
  let failed = false;
  child.on('error', (err) => {
    failed = true;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    process.stderr.write(`mcp-proxy: the server ${args.server} could not be started (${code})\n`);
    logHookError(
      stateDir,
      `mcp-proxy ${args.client}`,
      `server ${args.server} could not be started (${code})`,
    );
    process.exitCode = 1;
    process.stdin.destroy();
  });
  // Backpressure both ways: a side that cannot keep up pauses the other.
  process.stdin.on('data', (chunk: Buffer) => {
    if (!proxy.fromClient(chunk)) {
      process.stdin.pause();
      child.stdin.once('drain', () => process.stdin.resume());
    }
  });
  process.stdin.on('end', () => {
    proxy.clientEnded();
    child.stdin.end();
  });
  child.stdin.on('error', () => {});
  child.stdout.on('data', (chunk: Buffer) => {
    if (!proxy.fromServer(chunk)) {
      child.stdout.pause();
      process.stdout.once('drain', () => child.stdout.resume());
    }
  });
  child.on('close', (code, signal) => {
    proxy.serverExited();
    process.stdin.destroy();
    // A server that never started also closes, with a negative errno for a code: the exit code stays 1.
    if (!failed) process.exitCode = code ?? (signal ? 1 : 0);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
}
