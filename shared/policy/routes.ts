// Rows of the route table for the fleet's MCP policy (docs/policy.md): the admin routes that read, write, restore,
// validate, compare and dry-run it, the list of which version each device holds, and the signed device route that
// fetches it with an ETag. Merged into shared/routes.ts.
import type { RouteSpec } from '../core/http/route.ts';
import { defineRoute } from '../core/http/route.ts';
import { envelope } from '../core/schemas/common.ts';
import {
  devicePolicyBody,
  devicePolicyResponse,
  diffPolicyBody,
  dryRunBody,
  listPolicyDevicesQuery,
  listPolicyVersionsQuery,
  policyDeviceListResponse,
  policyDiff,
  policyDryRun,
  policyEnvelope,
  policyValidation,
  policyVersionListResponse,
  policyVersionParam,
  putPolicyBody,
  restorePolicyBody,
  validatePolicyBody,
} from './schemas.ts';

export const getPolicy = defineRoute({
  method: 'GET',
  path: '/v1/admin/policy',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy'],
  summary: 'The MCP policy in force: its version, ETag and document (version 0: the built-in allow-all)',
  response: policyEnvelope,
});

export const putPolicy = defineRoute({
  method: 'PUT',
  path: '/v1/admin/policy',
  handler: 'policy/admin',
  auth: 'admin',
  kind: 'write',
  tags: ['policy'],
  summary: 'Save the MCP policy as a new version, with the reason (audited policy.updated)',
  description:
    'The document is refused (400 naming the field) as POST /v1/admin/policy/validate would. Saving the document in force again makes no version and answers the current one. With base_version, another version saved since is 409 policy_changed, and so is a save that races another.',
  body: putPolicyBody,
  response: policyEnvelope,
  errors: [409],
  maxBody: { bytes: 524_288 /* 512 KiB */, code: 'payload_too_large' },
});

export const listPolicyVersions = defineRoute({
  method: 'GET',
  path: '/v1/admin/policy/versions',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy'],
  summary: 'Every saved version of the MCP policy, newest first: who saved it, why, how many rules',
  query: listPolicyVersionsQuery,
  response: policyVersionListResponse,
});

export const getPolicyVersion = defineRoute({
  method: 'GET',
  path: '/v1/admin/policy/versions/{version}',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy'],
  summary: 'One saved version of the MCP policy with its document',
  params: policyVersionParam,
  response: policyEnvelope,
  errors: [404],
});

export const restorePolicy = defineRoute({
  method: 'POST',
  path: '/v1/admin/policy/versions/{version}/restore',
  handler: 'policy/admin',
  auth: 'admin',
  kind: 'write',
  tags: ['policy'],
  summary: 'Put an earlier version back in force, as a new version (audited policy.restored)',
  params: policyVersionParam,
  body: restorePolicyBody,
  response: policyEnvelope,
  errors: [404, 409],
});

export const validatePolicy = defineRoute({
  method: 'POST',
  path: '/v1/admin/policy/validate',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy'],
  summary: 'Check a policy document without saving it: the problems a save would refuse, and warnings',
  description:
    'Always 200 for a body {policy}: valid false lists each problem with the path of its field. Warnings name rules no call can reach (an earlier enforce rule decides all they match) and audit-mode allow rules (they do nothing).',
  body: validatePolicyBody,
  response: envelope(policyValidation),
  maxBody: { bytes: 524_288 /* 512 KiB */, code: 'payload_too_large' },
});

export const diffPolicy = defineRoute({
  method: 'POST',
  path: '/v1/admin/policy/diff',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy'],
  summary:
    'Compare two versions of the MCP policy, or a version with a draft: rules added, removed, changed, moved',
  body: diffPolicyBody,
  response: envelope(policyDiff),
  errors: [404],
  maxBody: { bytes: 524_288 /* 512 KiB */, code: 'payload_too_large' },
});

export const dryRunPolicy = defineRoute({
  method: 'POST',
  path: '/v1/admin/policy/dry-run',
  handler: 'policy/admin',
  auth: 'admin',
  kind: 'query',
  tags: ['policy'],
  summary:
    'What a policy (a draft, or the one in force) would have done to the stored calls of the last days',
  description:
    'Counts per rule, computed from the stored events in one statement: an enforce rule counts the calls it decides, an audit rule the calls it matches before any enforce rule decides them; the default counts the rest. Device tags and source identities are the ones the agent recorded with each event (metadata.device_tags, metadata.mcp_source).',
  body: dryRunBody,
  response: envelope(policyDryRun),
  maxBody: { bytes: 524_288 /* 512 KiB */, code: 'payload_too_large' },
});

export const listPolicyDevices = defineRoute({
  method: 'GET',
  path: '/v1/admin/policy/devices',
  handler: 'policy/admin',
  auth: 'admin',
  tags: ['policy', 'devices'],
  summary: 'Which policy version each device last fetched, and when (null: never); newest fetch first',
  query: listPolicyDevicesQuery,
  response: policyDeviceListResponse,
});

export const fetchDevicePolicy = defineRoute({
  method: 'POST',
  path: '/v1/devices/policy',
  handler: 'policy/device',
  auth: 'device',
  // It writes: the replay record and which version the device holds.
  kind: 'write',
  tags: ['devices', 'policy'],
  summary: 'The MCP policy for the signed device, with its ETag; 304 when If-None-Match names it',
  description:
    'Signed like inventory and events (X-Device-Signature over the canonical body {certificate, clientTimestamp}). The answer carries ETag; sent back in If-None-Match (or as `etag` in the signed body), an unchanged policy is 304 with no body. Either way the service records that the device holds that version (GET /v1/admin/policy/devices). See device-protocol.md.',
  headers: [
    {
      name: 'If-None-Match',
      description: 'The ETag of the copy the device holds: 304 when it is still the policy in force',
      schema: { type: 'string', maxLength: 200 },
    },
  ],
  body: devicePolicyBody,
  response: devicePolicyResponse,
  successStatuses: [200, 304],
  maxBody: { bytes: 65_536 /* 64 KiB */, code: 'payload_too_large' },
});

export const policyRoutes = {
  getPolicy,
  putPolicy,
  listPolicyVersions,
  getPolicyVersion,
  restorePolicy,
  validatePolicy,
  diffPolicy,
  dryRunPolicy,
  listPolicyDevices,
  fetchDevicePolicy,
} satisfies Record<string, RouteSpec>;
