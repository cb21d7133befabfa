// The MCP policy as data, and its evaluation: what the admin API stores and validates, what a device fetches, and
// what the hook decides with (docs/policy.md). No imports: the hook bundles this file and must start fast, and the
// service's dry run translates the same match rules into SQL (globLike), so both sides agree on what matches.

export const POLICY_EFFECTS = ['allow', 'deny'] as const;
export const POLICY_MODES = ['enforce', 'audit'] as const;
export const NO_CACHE_MODES = ['open', 'closed'] as const;
/** The facts of a call a rule can match, each with a glob (`*` any run of characters, `?` one), case-insensitive. */
export const MATCH_FIELDS = [
  'group',
  'actor',
  'device_tag',
  'agent_type',
  'server',
  'source',
  'tool',
] as const;

export type PolicyEffect = (typeof POLICY_EFFECTS)[number];
export type PolicyMode = (typeof POLICY_MODES)[number];
export type NoCacheMode = (typeof NO_CACHE_MODES)[number];
export type MatchField = (typeof MATCH_FIELDS)[number];
export type PolicyMatch = Partial<Record<MatchField, string>>;

export interface PolicyRule {
  id: string;
  effect: PolicyEffect;
  match: PolicyMatch;
  mode: PolicyMode;
  /** Shown to the developer when the rule denies. */
  reason: string;
}

export interface PolicyDocument {
  rules: PolicyRule[];
  /** What a call no rule matches gets (a server no rule names). */
  default: { effect: PolicyEffect; reason: string };
  /** What a device with no usable cache does: let calls through (open) or deny them (closed). */
  no_cache: NoCacheMode;
  /** How long a fetched copy stays usable on a device that cannot reach the service; absent: no limit. */
  cache_max_age_s?: number;
}

/** The policy in force before an admin writes one: everything allowed, no rule, fail open. */
export const BUILTIN_POLICY: PolicyDocument = {
  rules: [],
  default: { effect: 'allow', reason: 'No policy rule applies.' },
  no_cache: 'open',
};

/** One call as the policy sees it. `device_tags` are the device's own (its settings), `source` `<type>:<name>`. */
export interface PolicyCall {
  group?: string;
  actor?: string;
  device_tags?: readonly string[];
  agent_type?: string;
  server?: string;
  source?: string;
  tool?: string;
}

/**
 * The outcome of evaluating a call: the enforcing rule (or the default, id `default`) decides; the first audit-mode
 * rule that matched before it is reported as a would-be outcome and changes nothing.
 */
export interface PolicyOutcome {
  effect: PolicyEffect;
  /** `<rule id>@<version>`, `default@<version>` when no rule matched. */
  rule: string;
  reason: string;
  audit?: { effect: PolicyEffect; rule: string; reason: string };
}

const globs = new Map<string, RegExp>();

/** A glob as a RegExp, anchored and case-insensitive (compiled once per pattern). */
export function globRegExp(glob: string): RegExp {
  let re = globs.get(glob);
  if (!re) {
    const body = glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    re = new RegExp(`^${body}$`, 'is');
    globs.set(glob, re);
  }
  return re;
}

/** The same glob as an SQL ILIKE pattern with `\` as its escape character. */
export const globLike = (glob: string): string =>
  glob
    .replace(/[\\%_]/g, '\\$&')
    .replace(/\*/g, '%')
    .replace(/\?/g, '_');

const one = (glob: string | undefined, value: string | undefined): boolean =>
  glob === undefined || (value !== undefined && globRegExp(glob).test(value));

/** Whether every field the rule names matches the call (a rule naming no field matches every call). */
export function ruleMatches(match: PolicyMatch, call: PolicyCall): boolean {
  if (match.device_tag !== undefined) {
    const re = globRegExp(match.device_tag);
    if (!call.device_tags?.some((tag) => re.test(tag))) return false;
  }
  return (
    one(match.server, call.server) &&
    one(match.tool, call.tool) &&
    one(match.agent_type, call.agent_type) &&
    one(match.source, call.source) &&
    one(match.actor, call.actor) &&
    one(match.group, call.group)
  );
}

/** Rules in order: the first enforce-mode rule that matches decides; none: the default. */
export function evaluatePolicy(policy: PolicyDocument, version: number, call: PolicyCall): PolicyOutcome {
  let audit: PolicyOutcome['audit'];
  for (const rule of policy.rules) {
    if (!ruleMatches(rule.match, call)) continue;
    const ref = `${rule.id}@${version}`;
    if (rule.mode === 'audit') {
      audit ??= { effect: rule.effect, rule: ref, reason: rule.reason };
      continue;
    }
    return { effect: rule.effect, rule: ref, reason: rule.reason, ...(audit ? { audit } : {}) };
  }
  return {
    effect: policy.default.effect,
    rule: `default@${version}`,
    reason: policy.default.reason,
    ...(audit ? { audit } : {}),
  };
}

/** Whether the policy needs the server's source identity (the hook reads it from disk only then). */
export const needsSource = (policy: PolicyDocument): boolean =>
  policy.rules.some((rule) => rule.match.source !== undefined);
