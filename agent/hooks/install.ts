// `agent hooks install | uninstall`: the agent's hook command merged into each client's settings file, or into the
// machine-wide file an MDM deploys (--managed). Edits go through jsonc-parser, so the rest of the file keeps its
// bytes, comments and formatting; the user's own hooks are never touched. Install is idempotent and leaves a
// backup of the file as it was; uninstall restores those exact bytes when nothing else changed the file since, and
// otherwise removes only the agent's entries.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  applyEdits,
  type FormattingOptions,
  modify,
  type ParseError,
  parse,
  printParseErrorCode,
} from 'jsonc-parser';
import { HOOK_CLIENTS } from './clients/index.ts';
import { defaultHookEntry, hookCommandLine, ourHook } from './command-line.ts';
import type { HookClient, HookEnv, InstallSpec } from './types.ts';

export interface HooksOptions {
  stateDir: string;
  /** Write the machine-wide (managed) files instead of the user's. */
  managed?: boolean;
  /** Only these clients; by default every client with hooks (that is set up for this user, unless managed). */
  clients?: readonly string[];
  /** Managed files are written under this directory instead of `/` (packaging, tests). */
  root?: string;
  env?: HookEnv;
  /** The file the hook command runs, and the Node.js that runs it. */
  hookEntry?: string;
  node?: string;
}

export type HookStatus =
  | 'installed'
  | 'unchanged'
  | 'restored'
  | 'removed'
  | 'not-found'
  | 'skipped'
  | 'failed';

export interface HookOutcome {
  client: string;
  status: HookStatus;
  file?: string;
  backup?: string;
  message?: string;
}

interface InstallRecord {
  client: string;
  file: string;
  sha256: string;
  /** The backup of the file as it was before, or null if there was no file. */
  backup: string | null;
  createdDirs: string[];
}

export const BACKUP_SUFFIX = '.acp-agent-backup';

export const currentEnv = (): HookEnv => ({ home: homedir(), platform: process.platform, env: process.env });

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

const recordsPath = (stateDir: string): string => join(stateDir, 'hooks', 'installed.json');

function readRecords(stateDir: string): InstallRecord[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(recordsPath(stateDir), 'utf8'));
    return Array.isArray(parsed) ? (parsed as InstallRecord[]) : [];
  } catch {
    return [];
  }
}

function writeRecords(stateDir: string, records: InstallRecord[]): void {
  mkdirSync(dirname(recordsPath(stateDir)), { recursive: true, mode: 0o700 });
  atomicWrite(recordsPath(stateDir), `${JSON.stringify(records, null, 2)}\n`, 0o600);
}

function atomicWrite(file: string, text: string | Buffer, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

function targetFile(client: HookClient, options: HooksOptions, env: HookEnv): string | undefined {
  if (!options.managed) return client.install.userFile(env);
  const managed = client.install.managedFile?.(env);
  if (!managed) return undefined;
  if (!options.root) return managed;
  // Under the root, the way an installer's DESTDIR works (a Windows path loses its drive).
  return join(
    options.root,
    ...managed
      .replace(/^[A-Za-z]:/, '')
      .split(/[\\/]+/)
      .filter(Boolean),
  );
}

function selected(options: HooksOptions): { clients: HookClient[]; unknown: string[] } {
  if (!options.clients || options.clients.length === 0) return { clients: [...HOOK_CLIENTS], unknown: [] };
  const clients = HOOK_CLIENTS.filter((client) => options.clients?.includes(client.id));
  return { clients, unknown: options.clients.filter((id) => !clients.some((client) => client.id === id)) };
}

function formatting(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  return {
    insertSpaces: !indent?.startsWith('\t'),
    tabSize: indent && !indent.startsWith('\t') ? indent.length : 2,
    eol: text.includes('\r\n') ? '\r\n' : '\n',
  };
}

/** The parsed file, or an error naming the file and line of the first problem. */
function parseSettings(file: string, text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first) {
    const before = text.slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    throw new Error(
      `${file}:${line}:${column}: ${printParseErrorCode(first.error)}; the file was not changed`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${file}: not a JSON object; the file was not changed`);
  return value as Record<string, unknown>;
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asObject = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/** Where the client's own entries are: [event, index in the event's array, index in the group's hooks or -1]. */
function ourEntries(spec: InstallSpec, settings: Record<string, unknown>, clientId: string) {
  const found: Array<{
    event: string;
    index: number;
    handler: number;
    command: string;
    wholeGroup: boolean;
  }> = [];
  const hooks = asObject(settings.hooks) ?? {};
  for (const [event, entries] of Object.entries(hooks)) {
    asArray(entries).forEach((entry, index) => {
      if (spec.layout === 'flat') {
        const command = asObject(entry)?.command;
        if (ourHook(command)?.client === clientId)
          found.push({ event, index, handler: -1, command: command as string, wholeGroup: true });
        return;
      }
      const handlers = asArray(asObject(entry)?.hooks);
      const mine = handlers.flatMap((handler, h) => {
        const command = asObject(handler)?.command;
        return ourHook(command)?.client === clientId ? [{ h, command: command as string }] : [];
      });
      for (const { h, command } of mine)
        found.push({ event, index, handler: h, command, wholeGroup: mine.length === handlers.length });
    });
  }
  return found;
}

function edit(text: string, path: (string | number)[], value: unknown, insert = false): string {
  return applyEdits(
    text,
    modify(text, path, value, { formattingOptions: formatting(text), isArrayInsertion: insert }),
  );
}

/** The text without the client's entries; event arrays and the hooks object emptied by that go too. */
function withoutOurs(text: string, spec: InstallSpec, clientId: string): string {
  const ours = ourEntries(spec, parseSettings('', text), clientId);
  if (ours.length === 0) return text;
  // From the last to the first, so that the indexes still to remove stay valid.
  ours.sort((a, b) => a.event.localeCompare(b.event) || b.index - a.index || b.handler - a.handler);
  let out = text;
  const removedGroups = new Set<string>();
  for (const entry of ours) {
    if (!entry.wholeGroup)
      out = edit(out, ['hooks', entry.event, entry.index, 'hooks', entry.handler], undefined);
    else if (!removedGroups.has(`${entry.event}\0${entry.index}`)) {
      removedGroups.add(`${entry.event}\0${entry.index}`);
      out = edit(out, ['hooks', entry.event, entry.index], undefined);
    }
  }
  for (const event of new Set(ours.map((entry) => entry.event)))
    if (asArray(asObject(parseSettings('', out).hooks)?.[event]).length === 0)
      out = edit(out, ['hooks', event], undefined);
  const hooks = asObject(parseSettings('', out).hooks);
  if (hooks && Object.keys(hooks).length === 0) out = edit(out, ['hooks'], undefined);
  return out;
}

function withOurs(text: string, spec: InstallSpec, commandFor: (event: string) => string): string {
  let out = text.trim() === '' ? '{}\n' : text;
  for (const [key, value] of Object.entries(spec.required ?? {}))
    if (!(key in parseSettings('', out))) out = edit(out, [key], value);
  for (const { event, matcher } of spec.events) {
    const handler = spec.handler(commandFor(event));
    const entry = spec.layout === 'flat' ? handler : { ...(matcher ? { matcher } : {}), hooks: [handler] };
    const settings = parseSettings('', out);
    const hooks = settings.hooks;
    if (hooks === undefined) out = edit(out, ['hooks'], { [event]: [entry] });
    else if (!asObject(hooks)) throw new Error('its "hooks" is not an object; the file was not changed');
    else if ((hooks as Record<string, unknown>)[event] === undefined)
      out = edit(out, ['hooks', event], [entry]);
    else if (!Array.isArray((hooks as Record<string, unknown>)[event]))
      throw new Error(`its "hooks.${event}" is not an array; the file was not changed`);
    else
      out = edit(
        out,
        ['hooks', event, asArray((hooks as Record<string, unknown>)[event]).length],
        entry,
        true,
      );
  }
  return out;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The directories that must be created for `file`, outermost first. */
function missingDirs(file: string): string[] {
  const dirs: string[] = [];
  for (let dir = dirname(file); !existsSync(dir); dir = dirname(dir)) dirs.unshift(dir);
  return dirs;
}

interface Target {
  client: HookClient;
  file: string;
  env: HookEnv;
  records: InstallRecord[];
}

/** Runs `act` on each selected client's file; the install records are read before and saved after. */
function forEachTarget(options: HooksOptions, act: (target: Target) => HookOutcome): HookOutcome[] {
  const env = options.env ?? currentEnv();
  const { clients, unknown } = selected(options);
  const outcomes: HookOutcome[] = unknown.map((client) => ({
    client,
    status: 'failed',
    message: 'not a client whose calls the agent can capture',
  }));
  const records = readRecords(options.stateDir);
  for (const client of clients) {
    const file = targetFile(client, options, env);
    if (!file) {
      outcomes.push({
        client: client.id,
        status: 'skipped',
        message: client.install.managedNote ?? 'no managed file',
      });
      continue;
    }
    try {
      outcomes.push(act({ client, file, env, records }));
    } catch (err) {
      outcomes.push({ client: client.id, status: 'failed', file, message: (err as Error).message });
    }
  }
  writeRecords(options.stateDir, records);
  return outcomes;
}

function takeRecord(records: InstallRecord[], client: HookClient, file: string): InstallRecord | undefined {
  const index = records.findIndex((r) => r.file === file && r.client === client.id);
  return index === -1 ? undefined : records.splice(index, 1)[0];
}

const noteOf = (client: HookClient): { message?: string } =>
  client.install.note ? { message: client.install.note } : {};

export function installHooks(options: HooksOptions): HookOutcome[] {
  const node = options.node ?? process.execPath;
  const entry = options.hookEntry ?? defaultHookEntry();
  return forEachTarget(options, ({ client, file, env, records }) => {
    if (!options.managed && !options.clients?.includes(client.id) && !existsSync(client.install.userDir(env)))
      return {
        client: client.id,
        status: 'not-found',
        file,
        message: `${client.install.userDir(env)} does not exist`,
      };
    const before = readText(file);
    if (before !== undefined) parseSettings(file, before);
    const commandFor = (event: string) =>
      hookCommandLine({
        node,
        entry,
        client: client.id,
        event,
        platform: env.platform,
        ...(options.managed ? {} : { stateDir: options.stateDir }),
      });
    // Already there, exactly: nothing to do. Otherwise the agent's older entries are replaced by the current ones.
    if (before !== undefined && sameEntries(before, client, commandFor))
      return { client: client.id, status: 'unchanged', file, ...noteOf(client) };
    const after = withOurs(
      before === undefined ? '' : withoutOurs(before, client.install, client.id),
      client.install,
      commandFor,
    );
    // Rewriting the agent's own install (a new agent path) keeps its record: the backup is the file the user had.
    const previous = takeRecord(records, client, file);
    const kept =
      previous && before !== undefined && previous.sha256 === sha256(before) ? previous : undefined;
    const createdDirs = kept ? kept.createdDirs : missingDirs(file);
    mkdirSync(dirname(file), { recursive: true });
    let backup = kept ? kept.backup : null;
    if (!kept && before !== undefined) {
      backup = `${file}${BACKUP_SUFFIX}`;
      copyFileSync(file, backup);
    }
    atomicWrite(file, after, before === undefined ? 0o644 : statSync(file).mode & 0o777);
    records.push({ client: client.id, file, sha256: sha256(after), backup, createdDirs });
    return { client: client.id, status: 'installed', file, ...(backup ? { backup } : {}), ...noteOf(client) };
  });
}

/** Whether the file holds exactly the entries the install would write, and no other of the agent's. */
function sameEntries(text: string, client: HookClient, commandFor: (event: string) => string): boolean {
  const settings = parseSettings('', text);
  const ours = ourEntries(client.install, settings, client.id);
  const wanted = client.install.events.map(({ event }) => ({ event, command: commandFor(event) }));
  return (
    ours.length === wanted.length &&
    wanted.every((w) => ours.some((o) => o.event === w.event && o.command === w.command)) &&
    Object.keys(client.install.required ?? {}).every((key) => key in settings)
  );
}

export function uninstallHooks(options: HooksOptions): HookOutcome[] {
  return forEachTarget(options, ({ client, file, records }) => {
    const record = takeRecord(records, client, file);
    const text = readText(file);
    if (text === undefined) return { client: client.id, status: 'unchanged', file, message: 'no file' };
    if (record && sha256(text) === record.sha256) {
      // Nothing else changed the file since the install: put back the exact bytes (or no file) there were.
      if (record.backup && existsSync(record.backup)) {
        atomicWrite(file, readFileSync(record.backup), statSync(file).mode & 0o777);
        unlinkSync(record.backup);
      } else {
        unlinkSync(file);
        for (const dir of [...record.createdDirs].reverse()) {
          try {
            if (readdirSync(dir).length === 0) rmdirSync(dir);
          } catch {}
        }
      }
      return { client: client.id, status: 'restored', file };
    }
    const stripped = withoutOurs(text, client.install, client.id);
    if (stripped === text)
      return { client: client.id, status: 'unchanged', file, message: 'no entries of the agent' };
    atomicWrite(file, stripped, statSync(file).mode & 0o777);
    return {
      client: client.id,
      status: 'removed',
      file,
      ...(record?.backup && existsSync(record.backup) ? { backup: record.backup } : {}),
      message: 'the file changed since the install: only the agent entries were removed',
    };
  });
}
