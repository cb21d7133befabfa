// `agent hooks install --proxy NAME` and its undo: a stdio server's entry in a client's config rewritten to run the
// agent's proxy, `"command": <node>, "args": [<agent>, "mcp-proxy", …, "--", <original command>, <original args>…]`.
// Only the entry's `command` and `args` values change (their text is replaced where it stands, so the rest of the
// file keeps its bytes, comments and formatting), and the text they had is kept in the state directory (which holds
// nothing that leaves the device), so that the uninstall puts back exactly those bytes. The environment, the
// entry's other keys and every other server are never touched: the proxy inherits the env the client gives it.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findNodeAtLocation, type Node, parseTree } from 'jsonc-parser';
import { CLIENTS } from '../clients/index.ts';
import { scanMachine } from '../discovery/scan.ts';
import { hookClient } from '../hooks/clients/index.ts';
import type { HookOutcome } from '../hooks/install.ts';
import type { HookEnv } from '../hooks/types.ts';
import { defaultProxyEntry, proxyArgv, wrappedServer } from './command-line.ts';

export interface ProxyInstallOptions {
  stateDir: string;
  /** Server names to wrap; for the uninstall, to unwrap (none: every wrapped server). */
  servers: readonly string[];
  /** Only these clients (discovery's agent types); by default every client whose config names the server. */
  clients?: readonly string[];
  env: HookEnv;
  /** Project directories whose configs to look in, besides those the clients record. */
  projectDirs?: readonly string[];
  /** The agent file the config runs, and the Node.js that runs it. */
  entry?: string;
  node?: string;
}

/** One wrapped entry: where it is, and the text its `command` and `args` had (null: the entry had no args). */
interface ProxyRecord {
  client: string;
  server: string;
  file: string;
  /** The JSON path of the entry in the file. */
  path: Array<string | number>;
  command: string;
  args: string | null;
}

/** The object keys under which clients keep their servers (Claude Desktop, Cursor, Windsurf, Gemini CLI,
 * Claude Code: `mcpServers`; VS Code: `servers` and `mcp.servers`; Zed: `context_servers`). */
const CONTAINERS = new Set(['mcpServers', 'servers', 'context_servers']);
/** How deep a container may be: Claude Code keeps project servers at `projects.<dir>.mcpServers`. */
const MAX_DEPTH = 3;

const recordsPath = (stateDir: string) => join(stateDir, 'proxy', 'installed.json');

function readRecords(stateDir: string): ProxyRecord[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(recordsPath(stateDir), 'utf8'));
    return Array.isArray(parsed) ? (parsed as ProxyRecord[]) : [];
  } catch {
    return [];
  }
}

function atomicWrite(file: string, text: string, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

function writeRecords(stateDir: string, records: ProxyRecord[]): void {
  mkdirSync(dirname(recordsPath(stateDir)), { recursive: true, mode: 0o700 });
  atomicWrite(recordsPath(stateDir), `${JSON.stringify(records, null, 2)}\n`, 0o600);
}

const propertyValue = (object: Node | undefined, key: string): Node | undefined =>
  object?.type === 'object'
    ? object.children?.find((p) => p.children?.[0]?.value === key)?.children?.[1]
    : undefined;

/** The JSON paths of the entries named `server` in a parsed file: `<container>.<server>` at any depth up to MAX_DEPTH. */
function entryPaths(root: Node | undefined, server: string): Array<Array<string | number>> {
  const found: Array<Array<string | number>> = [];
  const walk = (node: Node | undefined, path: Array<string | number>, depth: number) => {
    if (node?.type !== 'object' || depth > MAX_DEPTH) return;
    for (const property of node.children ?? []) {
      const key = property.children?.[0]?.value;
      const value = property.children?.[1];
      if (typeof key !== 'string' || !value) continue;
      if (CONTAINERS.has(key)) {
        const entry = propertyValue(value, server);
        if (entry?.type === 'object' && propertyValue(entry, 'command')?.type === 'string')
          found.push([...path, key, server]);
      }
      walk(value, [...path, key], depth + 1);
    }
  };
  walk(root, [], 0);
  return found;
}

const sourceText = (text: string, node: Node): string => text.slice(node.offset, node.offset + node.length);

interface Edit {
  offset: number;
  length: number;
  text: string;
}

function applyEdits(text: string, edits: Edit[]): string {
  let out = text;
  for (const edit of [...edits].sort((a, b) => b.offset - a.offset))
    out = out.slice(0, edit.offset) + edit.text + out.slice(edit.offset + edit.length);
  return out;
}

function readText(file: string): string {
  return readFileSync(file, 'utf8');
}

const outcome = (
  client: string,
  status: HookOutcome['status'],
  file: string | undefined,
  message: string,
): HookOutcome => ({ client, status, ...(file ? { file } : {}), message });

/** Wraps each named stdio server in each selected client's config. */
export async function installProxies(options: ProxyInstallOptions): Promise<HookOutcome[]> {
  const scan = await scanMachine({
    home: options.env.home,
    platform: options.env.platform,
    env: options.env.env,
    projectDirs: options.projectDirs ?? [],
    clients: CLIENTS.filter((c) => !options.clients?.length || options.clients.includes(c.agentType)),
  });
  const node = options.node ?? process.execPath;
  const entry = options.entry ?? defaultProxyEntry();
  const records = readRecords(options.stateDir);
  const outcomes: HookOutcome[] = [];
  for (const server of options.servers) {
    const files = new Map<string, string>();
    for (const client of scan.clients)
      for (const s of client.servers)
        if (s.name === server && s.transport === 'stdio' && s.command) files.set(s.file, client.agentType);
    if (files.size === 0) {
      outcomes.push(
        outcome(server, 'not-found', undefined, `no client has a stdio MCP server named ${server}`),
      );
      continue;
    }
    for (const [file, client] of files) {
      try {
        outcomes.push(wrapIn(file, client, server, { node, entry, stateDir: options.stateDir }, records));
      } catch (err) {
        outcomes.push(outcome(client, 'failed', file, (err as Error).message));
      }
    }
  }
  writeRecords(options.stateDir, records);
  return outcomes;
}

function wrapIn(
  file: string,
  client: string,
  server: string,
  run: { node: string; entry: string; stateDir: string },
  records: ProxyRecord[],
): HookOutcome {
  if (file.endsWith('.toml')) return outcome(client, 'skipped', file, 'proxy mode edits JSON configs only');
  const text = readText(file);
  const root = parseTree(text, [], { allowTrailingComma: true });
  const edits: Edit[] = [];
  let wrapped = 0;
  for (const path of entryPaths(root, server)) {
    const entryNode = findNodeAtLocation(root as Node, path);
    const commandNode = propertyValue(entryNode, 'command') as Node;
    const argsNode = propertyValue(entryNode, 'args');
    const command = commandNode.value as string;
    const args = argsNode?.type === 'array' ? (argsNode.children ?? []).map((n) => n.value) : [];
    if (argsNode && (argsNode.type !== 'array' || args.some((a) => typeof a !== 'string')))
      throw new Error(`${server}: its args are not a list of strings; the file was not changed`);
    if (wrappedServer(args as string[])) continue;
    const proxied = JSON.stringify([
      run.entry,
      ...proxyArgv({ client, server, stateDir: run.stateDir, command, args: args as string[] }),
    ]);
    edits.push({ offset: commandNode.offset, length: commandNode.length, text: JSON.stringify(run.node) });
    if (argsNode) edits.push({ offset: argsNode.offset, length: argsNode.length, text: proxied });
    else
      edits.push({
        offset: commandNode.offset + commandNode.length,
        length: 0,
        text: `, "args": ${proxied}`,
      });
    const index = records.findIndex(
      (r) => r.file === file && r.client === client && JSON.stringify(r.path) === JSON.stringify(path),
    );
    if (index >= 0) records.splice(index, 1);
    records.push({
      client,
      server,
      file,
      path,
      command: sourceText(text, commandNode),
      args: argsNode ? sourceText(text, argsNode) : null,
    });
    wrapped++;
  }
  if (wrapped === 0) return outcome(client, 'unchanged', file, `${server} already runs through mcp-proxy`);
  atomicWrite(file, applyEdits(text, edits), statSync(file).mode & 0o777);
  const also = hookClient(client) ? '; its hooks record calls too, so they are counted twice' : '';
  return outcome(client, 'installed', file, `${server} runs through mcp-proxy${also}`);
}

/** Puts back the `command` and `args` each wrapped entry had; `servers` empty: every one the agent wrapped. */
export function uninstallProxies(
  options: Pick<ProxyInstallOptions, 'stateDir' | 'servers' | 'clients'>,
): HookOutcome[] {
  const records = readRecords(options.stateDir);
  const chosen = (r: ProxyRecord) =>
    (!options.servers.length || options.servers.includes(r.server)) &&
    (!options.clients?.length || options.clients.includes(r.client));
  const outcomes: HookOutcome[] = [];
  const byFile = new Map<string, ProxyRecord[]>();
  for (const record of records.filter(chosen))
    byFile.set(record.file, [...(byFile.get(record.file) ?? []), record]);
  for (const [file, fileRecords] of byFile) {
    const client = fileRecords[0]?.client ?? '';
    try {
      outcomes.push(unwrapIn(file, fileRecords));
    } catch (err) {
      outcomes.push(outcome(client, 'failed', file, (err as Error).message));
      continue;
    }
    for (const record of fileRecords) records.splice(records.indexOf(record), 1);
  }
  writeRecords(options.stateDir, records);
  return outcomes;
}

function unwrapIn(file: string, records: ProxyRecord[]): HookOutcome {
  const client = records[0]?.client ?? '';
  const names = [...new Set(records.map((r) => r.server))].join(', ');
  let text: string;
  try {
    text = readText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return outcome(client, 'unchanged', file, 'no file');
    throw err;
  }
  const root = parseTree(text, [], { allowTrailingComma: true });
  const edits: Edit[] = [];
  for (const record of records) {
    const entryNode = root && findNodeAtLocation(root, record.path);
    const commandNode = propertyValue(entryNode, 'command');
    const argsNode = propertyValue(entryNode, 'args');
    const args = argsNode?.type === 'array' ? (argsNode.children ?? []).map((n) => n.value) : undefined;
    const wrapped = args?.every((a) => typeof a === 'string') ? wrappedServer(args as string[]) : undefined;
    if (!commandNode || !argsNode || !wrapped) continue;
    // The original text, unless the wrapped command was edited since: then the edited one, unwrapped.
    const kept =
      JSON.parse(record.command) === wrapped.command &&
      JSON.stringify(record.args === null ? [] : JSON.parse(record.args)) === JSON.stringify(wrapped.args);
    edits.push({
      offset: commandNode.offset,
      length: commandNode.length,
      text: kept ? record.command : JSON.stringify(wrapped.command),
    });
    const between = text.slice(commandNode.offset + commandNode.length, argsNode.offset);
    if (kept && record.args === null && /^, "args": $/.test(between))
      edits.push({
        offset: commandNode.offset + commandNode.length,
        length: between.length + argsNode.length,
        text: '',
      });
    else
      edits.push({
        offset: argsNode.offset,
        length: argsNode.length,
        text: kept && record.args !== null ? record.args : JSON.stringify(wrapped.args),
      });
  }
  if (edits.length === 0) return outcome(client, 'unchanged', file, `${names}: not wrapped any more`);
  atomicWrite(file, applyEdits(text, edits), statSync(file).mode & 0o777);
  return outcome(client, 'restored', file, `${names} runs without mcp-proxy again`);
}
