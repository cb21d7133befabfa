// The hook's policy decision (docs/policy.md): from the copy of the fleet's policy the daemon keeps in the state
// directory, never the network. A copy that cannot be read, or is older than the policy's cache_max_age_s since the
// daemon last confirmed it, is no usable cache: the device then does what the policy said to do without one (its
// `no_cache`, remembered on its own in `fail-mode` so that a torn copy still knows it), else the device's settings
// (`policy.noCache`), else it lets calls through.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  evaluatePolicy,
  NO_CACHE_MODES,
  type NoCacheMode,
  needsSource,
  type PolicyDocument,
} from '#shared/policy/rules.ts';
import type { AgentSettings } from './settings.ts';
import type { Decision, ObservedCall } from './types.ts';

/** What the daemon keeps of a fetched policy. */
export interface PolicyCache {
  version: number;
  etag: string;
  /** When this version was fetched, and when the service last confirmed it (a 304), in ms since the epoch. */
  fetchedAt: number;
  checkedAt: number;
  policy: PolicyDocument;
}

export const policyDir = (stateDir: string): string => join(stateDir, 'policy');
const cachePath = (stateDir: string) => join(policyDir(stateDir), 'policy.json');
const failModePath = (stateDir: string) => join(policyDir(stateDir), 'fail-mode');
const sourcesPath = (stateDir: string) => join(stateDir, 'hooks', 'server-sources.json');

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

/**
 * The last copy read, by the file's identity: a long-lived reader (the MCP proxy) parses the copy again only when the
 * daemon replaced it (it writes a new file and renames it into place, so the inode changes).
 */
let lastRead:
  | { path: string; ino: number; mtimeMs: number; size: number; cache: PolicyCache | undefined }
  | undefined;

/** The copy as the daemon saved it, or undefined when there is none or it is not one (torn, edited, older). */
export function readPolicyCache(stateDir: string): PolicyCache | undefined {
  const path = cachePath(stateDir);
  let parsed: Partial<PolicyCache>;
  try {
    const { ino, mtimeMs, size } = statSync(path);
    if (
      lastRead?.path === path &&
      lastRead.ino === ino &&
      lastRead.mtimeMs === mtimeMs &&
      lastRead.size === size
    )
      return lastRead.cache;
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<PolicyCache>;
    lastRead = { path, ino, mtimeMs, size, cache: validCache(parsed) };
    return lastRead.cache;
  } catch {
    return undefined;
  }
}

function validCache(parsed: Partial<PolicyCache>): PolicyCache | undefined {
  const policy = parsed?.policy;
  const fine =
    typeof parsed?.version === 'number' &&
    typeof parsed.etag === 'string' &&
    typeof parsed.checkedAt === 'number' &&
    Array.isArray(policy?.rules) &&
    policy.rules.every(
      (r) => r && typeof r.id === 'string' && typeof r.match === 'object' && r.match !== null,
    ) &&
    (policy.default?.effect === 'allow' || policy.default?.effect === 'deny') &&
    NO_CACHE_MODES.includes(policy.no_cache);
  return fine ? (parsed as PolicyCache) : undefined;
}

/** Saves a fetched policy (written whole, then renamed into place) and what to do without it. */
export function savePolicyCache(stateDir: string, cache: PolicyCache): void {
  mkdirSync(policyDir(stateDir), { recursive: true, mode: 0o700 });
  writeAtomic(failModePath(stateDir), cache.policy.no_cache);
  writeAtomic(cachePath(stateDir), JSON.stringify(cache));
}

function failMode(stateDir: string, settings: AgentSettings): NoCacheMode {
  try {
    const mode = readFileSync(failModePath(stateDir), 'utf8').trim();
    if ((NO_CACHE_MODES as readonly string[]).includes(mode)) return mode as NoCacheMode;
  } catch {}
  return settings.policy.noCache ?? 'open';
}

/** The source identity (`<type>:<name>`) of each server of each client, as the daemon's last scan found them. */
export function saveServerSources(stateDir: string, clientId: string, sources: Record<string, string>): void {
  let all: Record<string, Record<string, string>> = {};
  try {
    all = JSON.parse(readFileSync(sourcesPath(stateDir), 'utf8')) as typeof all;
  } catch {}
  all[clientId] = sources;
  mkdirSync(join(stateDir, 'hooks'), { recursive: true, mode: 0o700 });
  writeAtomic(sourcesPath(stateDir), `${JSON.stringify(all)}\n`);
}

export function serverSource(stateDir: string, clientId: string, server: string): string | undefined {
  try {
    const all = JSON.parse(readFileSync(sourcesPath(stateDir), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    const source = all[clientId]?.[server];
    return typeof source === 'string' ? source : undefined;
  } catch {
    return undefined;
  }
}

export interface DecideContext {
  stateDir: string;
  clientId: string;
  agentType: string;
  settings: AgentSettings;
  now: number;
  /** The server's source identity when the caller knows it (the proxy, from the command it runs). */
  source?: string;
}

export const NO_CACHE_REASON =
  'This device has no usable copy of the MCP policy, and the policy says to refuse MCP calls without one. Ask your administrator, or let the agent reach the service.';

/** The decision on a call about to run: the cached policy's, or the no-cache one. */
export function policyDecision(call: ObservedCall, context: DecideContext): Decision {
  const { stateDir, settings } = context;
  const cache = readPolicyCache(stateDir);
  const maxAge = cache?.policy.cache_max_age_s;
  const usable = cache && (maxAge === undefined || context.now - cache.checkedAt <= maxAge * 1000);
  if (!usable) {
    const mode = cache?.policy.no_cache ?? failMode(stateDir, settings);
    if (mode === 'open') return { kind: 'allow', noCache: true };
    return {
      kind: 'deny',
      code: 'policy_unavailable',
      reason: NO_CACHE_REASON,
      rule: `no_cache@${cache?.version ?? 0}`,
    };
  }
  const source = needsSource(cache.policy)
    ? (context.source ?? serverSource(stateDir, context.clientId, call.server))
    : undefined;
  const actor = call.actorEmail ?? settings.actorEmail;
  const outcome = evaluatePolicy(cache.policy, cache.version, {
    server: call.server,
    tool: call.tool,
    agent_type: context.agentType,
    ...(source ? { source } : {}),
    ...(actor ? { actor } : {}),
    ...(settings.group ? { group: settings.group } : {}),
    device_tags: settings.deviceTags,
  });
  const audit =
    outcome.audit?.effect === 'deny'
      ? { audit: { rule: outcome.audit.rule, reason: outcome.audit.reason } }
      : {};
  if (outcome.effect === 'deny')
    return {
      kind: 'deny',
      code: outcome.rule.startsWith('default@') ? 'policy_default_deny' : 'policy_denied',
      reason: outcome.reason,
      rule: outcome.rule,
    };
  return { kind: 'allow', rule: outcome.rule, ...audit };
}

/** What the service's dry run matches rules on besides the event's own fields (docs/policy.md). */
export function policyFacts(settings: AgentSettings, source: string | undefined): Record<string, unknown> {
  return {
    ...(settings.deviceTags.length ? { device_tags: settings.deviceTags } : {}),
    ...(source ? { mcp_source: source } : {}),
  };
}
