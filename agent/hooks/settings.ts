// The device's settings for capture, in the state directory's config.json (other parts of the agent keep their own
// keys there). Read by every hook call, so a bad value falls back to its default and is reported, never thrown.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MAX_BYTES } from '../spool/spool.ts';

export interface CaptureSettings {
  /** Store the tool's input (truncated) with the event. Off by default. */
  toolInput: boolean;
  /** Store the tool's output (truncated) with the event. Off by default. */
  toolOutput: boolean;
  /** How much of a captured input or output is kept, in characters. */
  maxChars: number;
}

export interface AgentSettings {
  capture: CaptureSettings;
  spool: { maxBytes: number };
  /** Who uses this device, for clients whose payload does not say (Cursor's does). */
  actorEmail?: string;
  /** The device's group and tags, as an MDM sets them: what policy rules match on (docs/policy.md). */
  group?: string;
  deviceTags: string[];
  /** What the hook does before the daemon ever fetched a policy (the policy's own no_cache applies after). */
  policy: { noCache?: 'open' | 'closed' };
}

export const DEFAULT_SETTINGS: AgentSettings = {
  capture: { toolInput: false, toolOutput: false, maxChars: 2000 },
  spool: { maxBytes: DEFAULT_MAX_BYTES },
  deviceTags: [],
  policy: {},
};

export const settingsPath = (stateDir: string): string => join(stateDir, 'config.json');

export function readSettings(stateDir: string): { settings: AgentSettings; problems: string[] } {
  const problems: string[] = [];
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(settingsPath(stateDir), 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) raw = parsed as typeof raw;
    else problems.push('config.json: not a JSON object');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') problems.push('config.json: not valid JSON');
  }
  const section = (name: string): Record<string, unknown> => {
    const value = raw[name];
    if (value === undefined) return {};
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
    problems.push(`config.json: ${name} must be an object`);
    return {};
  };
  const flag = (from: Record<string, unknown>, key: string, field: string, fallback: boolean): boolean => {
    const value = from[key];
    if (value === undefined) return fallback;
    if (typeof value === 'boolean') return value;
    problems.push(`config.json: ${field} must be true or false`);
    return fallback;
  };
  const count = (
    from: Record<string, unknown>,
    key: string,
    field: string,
    fallback: number,
    min = 1,
  ): number => {
    const value = from[key];
    if (value === undefined) return fallback;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
    problems.push(`config.json: ${field} must be an integer of at least ${min}`);
    return fallback;
  };
  const capture = section('capture');
  const spool = section('spool');
  const defaults = DEFAULT_SETTINGS;
  const settings: AgentSettings = {
    capture: {
      toolInput: flag(capture, 'toolInput', 'capture.toolInput', defaults.capture.toolInput),
      toolOutput: flag(capture, 'toolOutput', 'capture.toolOutput', defaults.capture.toolOutput),
      maxChars: count(capture, 'maxChars', 'capture.maxChars', defaults.capture.maxChars),
    },
    spool: { maxBytes: count(spool, 'maxBytes', 'spool.maxBytes', defaults.spool.maxBytes, 64 * 1024) },
    deviceTags: [],
    policy: {},
  };
  if (typeof raw.group === 'string' && raw.group.trim()) settings.group = raw.group.trim();
  else if (raw.group !== undefined) problems.push('config.json: group must be a string');
  const tags = raw.deviceTags;
  if (Array.isArray(tags) && tags.every((t) => typeof t === 'string')) settings.deviceTags = tags as string[];
  else if (tags !== undefined) problems.push('config.json: deviceTags must be a list of strings');
  const noCache = section('policy').noCache;
  if (noCache === 'open' || noCache === 'closed') settings.policy.noCache = noCache;
  else if (noCache !== undefined) problems.push('config.json: policy.noCache must be "open" or "closed"');
  if (typeof raw.actorEmail === 'string' && raw.actorEmail.trim())
    settings.actorEmail = raw.actorEmail.trim();
  else if (raw.actorEmail !== undefined) problems.push('config.json: actorEmail must be a string');
  return { settings, problems };
}

/**
 * Records who uses this device as `actorEmail`, unless config.json already names someone (an admin's choice wins) or
 * cannot be read as an object (left as it is). Returns the email now in force, if any. The other keys keep their values.
 */
export function adoptActorEmail(stateDir: string, email: string): string | undefined {
  const path = settingsPath(stateDir);
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    raw = parsed as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  if (typeof raw.actorEmail === 'string' && raw.actorEmail.trim()) return raw.actorEmail.trim();
  raw.actorEmail = email;
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  return email;
}
