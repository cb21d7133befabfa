// The MCP policy on the wire (docs/policy.md): the document an admin writes and a device fetches, the admin
// routes' bodies and answers, and the device route's. The document's types and its evaluation are in
// shared/policy/rules.ts; these schemas validate it.
import * as z from 'zod';
import { envelope, isoTimestamp, pageEnvelope, pagination } from '../core/schemas/common.ts';
import { nullAsAbsent } from '../core/schemas/input-rules.ts';
import { pem, rfc3339 } from '../devices/schemas.ts';
import { MATCH_FIELDS, NO_CACHE_MODES, POLICY_EFFECTS, POLICY_MODES, type PolicyDocument } from './rules.ts';

const glob = z
  .string()
  .min(1, { message: 'must not be empty (leave the field out to match anything)' })
  .max(500)
  .meta({ description: 'A glob: `*` any run of characters, `?` one character; case-insensitive' });

export const policyMatch = nullAsAbsent(
  z
    .object(
      Object.fromEntries(MATCH_FIELDS.map((field) => [field, glob.optional()])) as Record<
        (typeof MATCH_FIELDS)[number],
        z.ZodOptional<typeof glob>
      >,
    )
    .strict(),
).meta({
  description:
    'Every field given must match the call; none given matches every call. group: the device’s group; actor: the developer’s email; device_tag: one of the device’s tags; agent_type: the client (claude-code, cursor, …); server: the MCP server’s name; source: its source identity `<type>:<name>` (npm:@modelcontextprotocol/server-postgres); tool: the tool’s name',
});

export const policyRule = nullAsAbsent(
  z
    .object({
      id: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, {
          message:
            'must be 1..100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
        })
        .meta({ description: 'Unique in the policy; reported as `<id>@<version>` in rule_applied' }),
      effect: z.enum(POLICY_EFFECTS),
      match: policyMatch.default({}),
      mode: z
        .enum(POLICY_MODES)
        .default('enforce')
        .meta({ description: 'audit: a match is reported (would deny) and the call goes through' }),
      reason: z.string().trim().min(1).max(1000).meta({ description: 'Shown to the developer on a deny' }),
    })
    .strict(),
);

export const policyDocument = nullAsAbsent(
  z
    .object({
      rules: z
        .array(policyRule)
        .max(500)
        .superRefine((rules, ctx) => {
          const seen = new Set<string>();
          rules.forEach((rule, i) => {
            if (seen.has(rule.id))
              ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `repeats the rule id ${rule.id}` });
            seen.add(rule.id);
          });
        }),
      default: nullAsAbsent(
        z
          .object({
            effect: z.enum(POLICY_EFFECTS),
            reason: z.string().trim().min(1).max(1000).default('No policy rule allows this MCP server.'),
          })
          .strict(),
      ).meta({ description: 'What a call no rule matches gets (a server no rule names)' }),
      no_cache: z.enum(NO_CACHE_MODES).meta({
        description: 'A device with no usable copy of the policy: open lets calls through, closed denies',
      }),
      cache_max_age_s: z.number().int().min(60).max(31_536_000).optional().meta({
        description: 'A fetched copy is usable this long without reaching the service; absent: always',
      }),
    })
    .strict(),
).meta({ id: 'PolicyDocument' });
// The schema's output is the document type the evaluator works with.
export type PolicyDocumentBody = z.output<typeof policyDocument> & PolicyDocument;

export const policyVersionView = z
  .object({
    version: z.number().int().meta({ description: '0: the built-in policy (nothing written yet)' }),
    etag: z.string(),
    policy: policyDocument,
    created_at: isoTimestamp.nullable(),
    created_by: z.string().nullable().meta({ description: 'The admin’s email' }),
    reason: z.string(),
    restored_from: z.number().int().nullable(),
  })
  .meta({ id: 'PolicyVersion' });
export type PolicyVersionView = z.output<typeof policyVersionView>;

const changeReason = z
  .string()
  .trim()
  .min(1)
  .max(1000)
  .meta({ description: 'Why: kept with the version and audited' });

export const putPolicyBody = nullAsAbsent(
  z
    .object({
      policy: policyDocument,
      reason: changeReason,
      base_version: z
        .number()
        .int()
        .min(0)
        .optional()
        .meta({ description: 'The version this edit started from: another since is 409 policy_changed' }),
    })
    .strict(),
);
export type PutPolicyBody = z.output<typeof putPolicyBody>;

export const restorePolicyBody = nullAsAbsent(z.object({ reason: changeReason }).strict());

export const policyVersionParam = z.object({
  version: z.coerce.number().int().min(1).max(2_147_483_647),
});

export const listPolicyVersionsQuery = z.object({ ...pagination });
export type ListPolicyVersionsQuery = z.output<typeof listPolicyVersionsQuery>;

export const policyVersionSummary = policyVersionView
  .omit({ policy: true })
  .extend({ rules: z.number().int() })
  .meta({ id: 'PolicyVersionSummary' });
export const policyVersionListResponse = pageEnvelope('versions', policyVersionSummary);

export const validatePolicyBody = nullAsAbsent(
  z
    .object({ policy: z.record(z.string(), z.unknown()).meta({ description: 'A policy document to check' }) })
    .strict(),
);
const problem = z.object({ path: z.string(), message: z.string() });
export const policyValidation = z
  .object({
    valid: z.boolean(),
    problems: z.array(problem).meta({ description: 'Why the document would be refused (400) on save' }),
    warnings: z
      .array(problem)
      .meta({ description: 'Accepted, but probably not meant (a rule no call can reach)' }),
  })
  .meta({ id: 'PolicyValidation' });
export type PolicyValidation = z.output<typeof policyValidation>;

export const diffPolicyBody = nullAsAbsent(
  z
    .object({
      from: z
        .number()
        .int()
        .min(0)
        .optional()
        .meta({ description: 'A stored version; default: the current one' }),
      to: z.number().int().min(0).optional().meta({ description: 'A stored version to compare with' }),
      policy: policyDocument.optional().meta({ description: 'A draft to compare with (instead of `to`)' }),
    })
    .strict()
    .refine((b) => (b.to === undefined) !== (b.policy === undefined), {
      message: 'give exactly one of to and policy',
      path: ['to'],
    }),
);
export type DiffPolicyBody = z.output<typeof diffPolicyBody>;

const ruleChange = z.object({
  id: z.string(),
  change: z.enum(['added', 'removed', 'changed', 'moved']),
  fields: z.array(z.string()).meta({ description: 'changed: the members that differ' }),
  before: policyRule.nullable(),
  after: policyRule.nullable(),
});
export const policyDiff = z
  .object({
    from: z.number().int(),
    to: z.number().int().nullable().meta({ description: 'null: the draft' }),
    rules: z.array(ruleChange),
    settings: z
      .array(z.object({ field: z.string(), before: z.unknown(), after: z.unknown() }))
      .meta({ description: 'default, no_cache, cache_max_age_s where they differ' }),
    same: z.boolean(),
  })
  .meta({ id: 'PolicyDiff' });
export type PolicyDiff = z.output<typeof policyDiff>;

export const dryRunBody = nullAsAbsent(
  z
    .object({
      policy: policyDocument.optional().meta({ description: 'A draft; default: the current policy' }),
      days: z.number().int().min(1).max(90).default(7),
    })
    .strict(),
);
export type DryRunBody = z.output<typeof dryRunBody>;

export const policyDryRun = z
  .object({
    from: isoTimestamp,
    to: isoTimestamp,
    calls: z.number().int().meta({ description: 'Stored events in the window' }),
    rules: z.array(
      z.object({
        id: z.string(),
        effect: z.enum(POLICY_EFFECTS),
        mode: z.enum(POLICY_MODES),
        matched: z.number().int().meta({
          description: 'enforce: the calls this rule decides; audit: the calls it matches on their way',
        }),
      }),
    ),
    default: z.object({ effect: z.enum(POLICY_EFFECTS), matched: z.number().int() }),
    allowed: z.number().int(),
    denied: z.number().int(),
    would_deny: z.number().int().meta({ description: 'Calls an audit-mode deny rule matched' }),
  })
  .meta({ id: 'PolicyDryRun' });
export type PolicyDryRun = z.output<typeof policyDryRun>;

export const policyDeviceView = z
  .object({
    device_id: z.string(),
    serial_number: z.string(),
    owner_email: z.string(),
    version: z.number().int().nullable().meta({ description: 'null: never fetched' }),
    fetched_at: isoTimestamp.nullable(),
    current: z.boolean().meta({ description: 'Whether it holds the current version' }),
  })
  .meta({ id: 'PolicyDevice' });
export const listPolicyDevicesQuery = z.object({
  ...pagination,
  stale: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: 'true: only devices that do not hold the current version' }),
  device_id: z.uuid().optional().meta({ description: 'Only this device (its page in the console)' }),
});
export type ListPolicyDevicesQuery = z.output<typeof listPolicyDevicesQuery>;
export const policyDeviceListResponse = envelope(
  z.object({
    current_version: z.number().int(),
    devices: z.array(policyDeviceView),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  }),
);

export const devicePolicyBody = nullAsAbsent(
  z.object({
    certificate: pem,
    clientTimestamp: rfc3339,
    etag: z.string().max(200).optional().meta({
      description:
        'The ETag of the copy the device holds, inside what it signs: 304 when still current (as If-None-Match)',
    }),
  }),
);
export const devicePolicyResponse = z
  .object({
    success: z.literal(true),
    deviceId: z.uuid(),
    version: z.number().int(),
    etag: z.string(),
    policy: policyDocument,
    fetchedAt: isoTimestamp,
  })
  .meta({ id: 'DevicePolicy' });

export const policyEnvelope = envelope(policyVersionView);
