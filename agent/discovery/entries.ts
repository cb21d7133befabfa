// The shape most clients share: a map of server name → entry with `command` / `args` / `env` for a local server
// and a URL (`url`, `httpUrl` or `serverUrl`) with `headers` for a remote one, an optional `type`, and a client's
// own way to switch one off. Each client module says where the map is and what differs.
import type { ServerEntry, Transport } from './types.ts';

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `doc.a.b.c`, or undefined when a step is not an object. */
export function at(doc: unknown, ...path: string[]): unknown {
  let value = doc;
  for (const key of path) {
    if (!isRecord(value)) return undefined;
    value = value[key];
  }
  return value;
}

export const stringList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

const TRANSPORTS: Record<string, Transport> = {
  stdio: 'stdio',
  local: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamablehttp: 'http',
  streamable_http: 'http',
  remote: 'http',
  sse: 'sse',
};

export interface EntryShape {
  transport: Transport;
  command?: string;
  args?: string[];
  url?: string;
}

/**
 * The command line or URL of an entry and its transport: the `type` when it names one, else stdio for a command,
 * `urlTransport` for a URL (clients differ: Gemini CLI's `url` is SSE, its `httpUrl` streamable HTTP).
 */
export function entryShape(
  config: Record<string, unknown>,
  urlTransport: (key: string) => Transport = () => 'http',
): EntryShape {
  const shape: EntryShape = { transport: 'stdio' };
  if (typeof config.command === 'string') {
    shape.command = config.command;
    shape.args = stringList(config.args);
  }
  const urlKey = ['url', 'httpUrl', 'serverUrl'].find((k) => typeof config[k] === 'string');
  if (urlKey && !shape.command) {
    shape.url = config[urlKey] as string;
    shape.transport = urlTransport(urlKey);
  }
  const type = typeof config.type === 'string' ? TRANSPORTS[config.type.toLowerCase()] : undefined;
  if (type) shape.transport = type;
  return shape;
}

/** Switched off in the entry itself: `disabled: true` (Windsurf, Cline-style files) or `enabled: false` (Codex, Zed). */
export function entrySwitch(config: Record<string, unknown>): { enabled: boolean; disabledBy?: string } {
  if (config.disabled === true) return { enabled: false, disabledBy: 'disabled: true' };
  if (config.enabled === false) return { enabled: false, disabledBy: 'enabled = false' };
  return { enabled: true };
}

/** The entries of a name → entry map; an entry that is not an object is not a server and is left out. */
export function entriesOf(
  map: unknown,
  base: { scope: string; file: string; project?: string },
  shape: (config: Record<string, unknown>) => EntryShape = (c) => entryShape(c),
): ServerEntry[] {
  if (!isRecord(map)) return [];
  const out: ServerEntry[] = [];
  for (const [name, config] of Object.entries(map)) {
    if (!isRecord(config) || !name.trim()) continue;
    out.push({ name, ...base, config, ...shape(config), ...entrySwitch(config) });
  }
  return out;
}
