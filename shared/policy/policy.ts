// The fleet's MCP policy (docs/policy.md): versions written by admins (each audited with who and why), restored,
// validated, compared and tried against the stored events of the last days; fetched by devices with an ETag, each
// fetch recorded so that an admin sees which version every device holds.
import { createHash } from 'node:crypto';
import { count, desc, eq, type SQL, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/audit.ts';
import { canonicalize } from '../core/canonical-json.ts';
import type { Db } from '../core/db/database.ts';
import { sqlState } from '../core/db/errors.ts';
import { col, queryJson, queryRows } from '../core/db/query.ts';
import { policyVersions } from '../core/db/schema.ts';
import { intParam, jsonParam, textParam, tsParam, uuidParam } from '../core/db/sql-values.ts';
import { conflict, notFound } from '../core/errors.ts';
import { signatureInsert } from '../devices/devices.ts';
import {
  enrolledDeviceSql,
  replayedRequest,
  unknownDevice,
  type VerifiedDeviceRequest,
} from '../devices/enrollment.ts';
import {
  BUILTIN_POLICY,
  globLike,
  MATCH_FIELDS,
  type PolicyDocument,
  type PolicyMatch,
  type PolicyRule,
} from './rules.ts';
import {
  type DiffPolicyBody,
  type DryRunBody,
  type ListPolicyDevicesQuery,
  type ListPolicyVersionsQuery,
  type PolicyDiff,
  type PolicyDryRun,
  type PolicyValidation,
  type PolicyVersionView,
  type PutPolicyBody,
  policyDocument,
} from './schemas.ts';

type VersionRow = typeof policyVersions.$inferSelect;

const documentHash = (doc: PolicyDocument): string =>
  createHash('sha256').update(canonicalize(doc), 'utf8').digest('hex');

/** The ETag of a version: its number and its document's hash (a restored document is a new version, a new tag). */
export const policyEtag = (version: number, hash: string): string => `"${version}-${hash.slice(0, 16)}"`;

const BUILTIN_VIEW: PolicyVersionView = {
  version: 0,
  etag: policyEtag(0, documentHash(BUILTIN_POLICY)),
  policy: BUILTIN_POLICY,
  created_at: null,
  created_by: null,
  reason: 'The built-in policy: no version was written yet.',
  restored_from: null,
};

const toView = (row: VersionRow): PolicyVersionView => ({
  version: row.version,
  etag: policyEtag(row.version, row.documentHash),
  policy: row.document as unknown as PolicyDocument,
  created_at: row.createdAt.toISOString(),
  created_by: row.createdByEmail,
  reason: row.reason,
  restored_from: row.restoredFrom,
});

/** The version in force: the newest written, else the built-in one (version 0). */
export async function currentPolicy(db: Db): Promise<PolicyVersionView> {
  const [row] = await db.select().from(policyVersions).orderBy(desc(policyVersions.version)).limit(1);
  return row ? toView(row) : BUILTIN_VIEW;
}

export async function getPolicyVersion(db: Db, version: number): Promise<PolicyVersionView> {
  if (version === 0) return BUILTIN_VIEW;
  const [row] = await db.select().from(policyVersions).where(eq(policyVersions.version, version)).limit(1);
  if (!row) throw notFound(`No policy version ${version}.`);
  return toView(row);
}

export async function listPolicyVersions(db: Db, query: ListPolicyVersionsQuery) {
  const rows = await db
    .select()
    .from(policyVersions)
    .orderBy(desc(policyVersions.version))
    .limit(query.limit)
    .offset(query.offset);
  const [total] = await db.select({ n: count() }).from(policyVersions);
  return {
    versions: rows.map((row) => {
      const { policy, ...rest } = toView(row);
      return { ...rest, rules: policy.rules.length };
    }),
    total: Number(total?.n ?? 0),
    limit: query.limit,
    offset: query.offset,
  };
}

/** The rule ids a change adds, removes and changes: kept in the audit record, so the chain says what moved. */
function changeSummary(before: PolicyDocument, after: PolicyDocument) {
  const diff = diffDocuments(before, after);
  const ids = (change: string) => diff.rules.filter((r) => r.change === change).map((r) => r.id);
  return {
    added: ids('added'),
    removed: ids('removed'),
    changed: ids('changed'),
    moved: ids('moved'),
    settings: diff.settings.map((s) => s.field),
  };
}

async function writeVersion(
  db: Db,
  doc: PolicyDocument,
  facts: { reason: string; actor: AuditActor; baseVersion?: number; restoredFrom?: number },
): Promise<PolicyVersionView> {
  const hash = documentHash(doc);
  try {
    return await db.transaction(async (tx) => {
      const current = await currentPolicy(tx);
      if (facts.baseVersion !== undefined && facts.baseVersion !== current.version)
        throw policyChanged(facts.baseVersion, current.version);
      // Saving the document in force again changes nothing: no version, no audit record.
      if (
        facts.restoredFrom === undefined &&
        current.etag === policyEtag(current.version, hash) &&
        current.version > 0
      )
        return current;
      const version = current.version + 1;
      const [row] = await tx
        .insert(policyVersions)
        .values({
          version,
          document: { ...doc },
          documentHash: hash,
          reason: facts.reason,
          createdById: facts.actor.id,
          createdByEmail: facts.actor.email,
          restoredFrom: facts.restoredFrom ?? null,
        })
        .returning();
      await recordAudit(tx, {
        actionType: facts.restoredFrom === undefined ? 'policy.updated' : 'policy.restored',
        actor: facts.actor,
        resourceType: 'policy',
        resourceId: String(version),
        metadata: {
          version,
          previous_version: current.version,
          reason: facts.reason,
          document_hash: hash,
          rules: doc.rules.length,
          ...(facts.restoredFrom === undefined ? {} : { restored_from: facts.restoredFrom }),
          ...changeSummary(current.policy, doc),
        },
      });
      return toView(row as VersionRow);
    });
  } catch (err) {
    // Another admin's save took the same version number first.
    if (sqlState(err) === '23505') throw policyChanged(facts.baseVersion, undefined);
    throw err;
  }
}

const policyChanged = (base: number | undefined, current: number | undefined) =>
  conflict(
    'policy_changed',
    current === undefined
      ? 'Another change to the policy was saved at the same time: read it again and redo the edit.'
      : `The policy is at version ${current}, not ${base}: read it again and redo the edit on it.`,
  );

/** PUT /v1/admin/policy: a new version (audited policy.updated), or the current one when nothing changed. */
export const savePolicy = (db: Db, body: PutPolicyBody, actor: AuditActor) =>
  writeVersion(db, body.policy, {
    reason: body.reason,
    actor,
    ...(body.base_version === undefined ? {} : { baseVersion: body.base_version }),
  });

/** POST /v1/admin/policy/versions/{version}/restore: that version's document as a new version (policy.restored). */
export async function restorePolicy(db: Db, version: number, reason: string, actor: AuditActor) {
  const old = await getPolicyVersion(db, version);
  return writeVersion(db, old.policy, { reason, actor, restoredFrom: version });
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) =>
      typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key),
    '',
  );

/** An earlier rule that decides every call this one matches: each field it names, this one names the same way. */
const covers = (earlier: PolicyMatch, later: PolicyMatch): boolean =>
  MATCH_FIELDS.every((field) => {
    const glob = earlier[field];
    return glob === undefined || glob === '*' || glob.toLowerCase() === later[field]?.toLowerCase();
  });

/** POST /v1/admin/policy/validate: what a save would refuse (problems) and what it would take but looks wrong. */
export function validatePolicy(candidate: unknown): PolicyValidation {
  const parsed = policyDocument.safeParse(candidate);
  if (!parsed.success) {
    return {
      valid: false,
      problems: parsed.error.issues.map((issue) => ({
        path: pathText(['policy', ...issue.path]),
        message: issue.message,
      })),
      warnings: [],
    };
  }
  const doc = parsed.data as PolicyDocument;
  const warnings: PolicyValidation['warnings'] = [];
  doc.rules.forEach((rule, i) => {
    const path = `policy.rules[${i}]`;
    if (rule.mode === 'audit' && rule.effect === 'allow')
      warnings.push({ path, message: `${rule.id}: an audit-mode allow reports nothing and changes nothing` });
    const shadow = doc.rules.slice(0, i).find((r) => r.mode === 'enforce' && covers(r.match, rule.match));
    if (shadow)
      warnings.push({
        path,
        message: `${rule.id}: never reached, ${shadow.id} before it decides every call it matches`,
      });
  });
  return { valid: true, problems: [], warnings };
}

const RULE_FIELDS = ['effect', 'match', 'mode', 'reason'] as const;

function diffDocuments(before: PolicyDocument, after: PolicyDocument): Omit<PolicyDiff, 'from' | 'to'> {
  const beforeIds = before.rules.map((r) => r.id);
  const afterIds = after.rules.map((r) => r.id);
  const common = afterIds.filter((id) => beforeIds.includes(id));
  const commonBefore = beforeIds.filter((id) => afterIds.includes(id));
  const rules: PolicyDiff['rules'] = [];
  const byId = (doc: PolicyDocument, id: string) => doc.rules.find((r) => r.id === id) as PolicyRule;
  for (const rule of before.rules) {
    if (!afterIds.includes(rule.id))
      rules.push({ id: rule.id, change: 'removed', fields: [], before: rule, after: null });
  }
  for (const rule of after.rules) {
    if (!beforeIds.includes(rule.id)) {
      rules.push({ id: rule.id, change: 'added', fields: [], before: null, after: rule });
      continue;
    }
    const old = byId(before, rule.id);
    const fields = RULE_FIELDS.filter((f) => canonicalize(old[f]) !== canonicalize(rule[f]));
    if (fields.length > 0) rules.push({ id: rule.id, change: 'changed', fields, before: old, after: rule });
    else if (common.indexOf(rule.id) !== commonBefore.indexOf(rule.id))
      rules.push({ id: rule.id, change: 'moved', fields: [], before: old, after: rule });
  }
  const settings: PolicyDiff['settings'] = [];
  for (const field of ['default', 'no_cache', 'cache_max_age_s'] as const) {
    if (canonicalize(before[field] ?? null) !== canonicalize(after[field] ?? null))
      settings.push({ field, before: before[field] ?? null, after: after[field] ?? null });
  }
  return { rules, settings, same: rules.length === 0 && settings.length === 0 };
}

/** POST /v1/admin/policy/diff: a stored version (default the current one) against another or a draft. */
export async function diffPolicies(db: Db, body: DiffPolicyBody): Promise<PolicyDiff> {
  const from = body.from === undefined ? await currentPolicy(db) : await getPolicyVersion(db, body.from);
  const to = body.to === undefined ? undefined : await getPolicyVersion(db, body.to);
  const after = to?.policy ?? (body.policy as PolicyDocument);
  return { from: from.version, to: to?.version ?? null, ...diffDocuments(from.policy, after) };
}

/**
 * POST /v1/admin/policy/dry-run: what the policy would have done to the stored calls of the last `days` days, in
 * one statement. Each event is matched against every rule as the hook matches it (shared/policy/rules.ts,
 * the globs as ILIKE patterns); per event the first enforce-mode rule decides, and each audit-mode rule before it
 * that matched counts as a would-be outcome. The device's tags and the server's source identity are the ones the
 * hook recorded in the event's metadata (device_tags, mcp_source): an event without them matches no rule that
 * names them.
 */
export async function dryRunPolicy(db: Db, body: DryRunBody, now = new Date()): Promise<PolicyDryRun> {
  const policy = (body.policy as PolicyDocument | undefined) ?? (await currentPolicy(db)).policy;
  const from = new Date(now.getTime() - body.days * 86_400_000);
  const rules = policy.rules.map((rule, pos) => ({
    pos,
    mode: rule.mode,
    ...Object.fromEntries(
      MATCH_FIELDS.map((field) => [
        field,
        rule.match[field] === undefined ? null : globLike(rule.match[field]),
      ]),
    ),
  }));
  const like = (value: SQL, field: string) =>
    sql`(r.${sql.raw(field)} IS NULL OR ${value} ILIKE r.${sql.raw(field)} ESCAPE '\\')`;
  const counts = await queryJson<{ calls: number; decided: Array<{ pos: number; n: number }> }>(
    db,
    sql`WITH r AS (
        SELECT * FROM jsonb_to_recordset(${jsonParam(rules)}) AS r(pos int, mode text, "group" text, actor text,
          device_tag text, agent_type text, server text, source text, tool text)),
      e AS (
        SELECT id, group_name, actor_email, agent_type, mcp_name, tool,
          CASE WHEN jsonb_typeof(metadata->'device_tags') = 'array' THEN metadata->'device_tags' ELSE '[]'::jsonb END
            AS tags,
          metadata->>'mcp_source' AS source
        FROM observability_events WHERE event_time >= ${tsParam(from)} AND event_time < ${tsParam(now)}),
      m AS (
        SELECT e.id, r.pos, r.mode FROM e JOIN r ON
          ${like(sql`e.mcp_name`, 'server')} AND ${like(sql`e.tool`, 'tool')}
          AND ${like(sql`e.agent_type`, 'agent_type')} AND ${like(sql`e.source`, 'source')}
          AND ${like(sql`e.actor_email`, 'actor')} AND ${like(sql`e.group_name`, '"group"')}
          AND (r.device_tag IS NULL OR EXISTS (
            SELECT 1 FROM jsonb_array_elements_text(e.tags) AS t(tag) WHERE t.tag ILIKE r.device_tag ESCAPE '\\'))),
      d AS (SELECT id, min(pos) FILTER (WHERE mode = 'enforce') AS decided FROM m GROUP BY id),
      per AS (
        SELECT m.pos, count(*)::int AS n FROM m JOIN d ON d.id = m.id
        WHERE (m.mode = 'enforce' AND m.pos = d.decided) OR (m.mode = 'audit' AND m.pos < coalesce(d.decided, ${intParam(2_147_483_647)}))
        GROUP BY m.pos)
      SELECT json_build_object(
        'calls', (SELECT count(*)::int FROM e),
        'decided', coalesce((SELECT json_agg(json_build_object('pos', pos, 'n', n)) FROM per), '[]'::json)) AS j`,
  );
  const matched = new Map(counts.decided.map(({ pos, n }) => [Number(pos), Number(n)]));
  const ruleCounts = policy.rules.map((rule, pos) => ({
    id: rule.id,
    effect: rule.effect,
    mode: rule.mode,
    matched: matched.get(pos) ?? 0,
  }));
  const calls = Number(counts.calls);
  const decidedByRules = ruleCounts.filter((r) => r.mode === 'enforce').reduce((n, r) => n + r.matched, 0);
  const byDefault = calls - decidedByRules;
  const enforcedDenies = ruleCounts
    .filter((r) => r.mode === 'enforce' && r.effect === 'deny')
    .reduce((n, r) => n + r.matched, 0);
  const denied = enforcedDenies + (policy.default.effect === 'deny' ? byDefault : 0);
  return {
    from: from.toISOString(),
    to: now.toISOString(),
    calls,
    rules: ruleCounts,
    default: { effect: policy.default.effect, matched: byDefault },
    allowed: calls - denied,
    denied,
    would_deny: ruleCounts
      .filter((r) => r.mode === 'audit' && r.effect === 'deny')
      .reduce((n, r) => n + r.matched, 0),
  };
}

/** GET /v1/admin/policy/devices: every device with the version it last fetched (null: never), newest fetch first. */
export async function listPolicyDevices(db: Db, query: ListPolicyDevicesQuery) {
  const current = await currentPolicy(db);
  const conditions: SQL[] = [];
  if (query.stale === 'true') conditions.push(sql`f.version IS DISTINCT FROM ${intParam(current.version)}`);
  if (query.stale === 'false') conditions.push(sql`f.version = ${intParam(current.version)}`);
  if (query.device_id) conditions.push(sql`d.id = ${uuidParam(query.device_id)}`);
  const stale = conditions.length ? sql`WHERE ${sql.join(conditions, sql` AND `)}` : sql``;
  const rows = await queryRows(
    db,
    sql`SELECT d.id::text AS device_id, d.serial_number, d.owner_email, f.version,
          to_char(f.fetched_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS fetched_at,
          (count(*) OVER ())::int AS total
        FROM devices d LEFT JOIN policy_fetches f ON f.device_id = d.id ${stale}
        ORDER BY f.fetched_at DESC NULLS LAST, d.serial_number, d.id
        LIMIT ${intParam(query.limit)} OFFSET ${intParam(query.offset)}`,
    {
      device_id: col.text,
      serial_number: col.text,
      owner_email: col.text,
      version: col.nullable(col.number),
      fetched_at: col.nullable(col.text),
      total: col.number,
    },
  );
  const total = rows[0]?.total ?? (await countPolicyDevices(db, stale));
  return {
    current_version: current.version,
    devices: rows.map((row) => {
      const version = row.version === null ? null : Number(row.version);
      return {
        device_id: row.device_id,
        serial_number: row.serial_number,
        owner_email: row.owner_email,
        version,
        fetched_at: row.fetched_at,
        current: version === current.version,
      };
    }),
    total: Number(total),
    limit: query.limit,
    offset: query.offset,
  };
}

/** The total of a page past the end (the window count of an empty page is not there). */
async function countPolicyDevices(db: Db, where: SQL): Promise<number> {
  const [row] = await queryRows(
    db,
    sql`SELECT count(*)::int AS n FROM devices d LEFT JOIN policy_fetches f ON f.device_id = d.id ${where}`,
    { n: col.number },
  );
  return Number(row?.n ?? 0);
}

/**
 * POST /v1/devices/policy: the policy in force for the signed device, or `notModified` when its If-None-Match names
 * it. Either way the fetch is recorded (the device holds that version now). One statement: the device found by its
 * certificate (401 unknown_device), the replay record, the fetch record and the policy.
 */
export async function fetchDevicePolicy(
  db: Db,
  device: VerifiedDeviceRequest,
  ifNoneMatch: string | undefined,
) {
  const now = new Date();
  const [row] = await queryRows(
    db,
    sql`WITH d AS (${enrolledDeviceSql(textParam(device.fingerprint))}),
      sig AS (${signatureInsert(device, sql`EXISTS (SELECT 1 FROM d)`)}),
      p AS (SELECT version, document, document_hash FROM policy_versions ORDER BY version DESC LIMIT 1),
      f AS (
        INSERT INTO policy_fetches (device_id, version, fetched_at)
        SELECT (SELECT id FROM d), coalesce((SELECT version FROM p), 0), ${tsParam(now)} WHERE EXISTS (SELECT 1 FROM sig)
        ON CONFLICT (device_id) DO UPDATE SET version = EXCLUDED.version, fetched_at = EXCLUDED.fetched_at
        RETURNING 1)
      SELECT (SELECT id::text FROM d) AS device_id, (SELECT count(*) FROM sig)::int AS ok,
        (SELECT version FROM p) AS version, (SELECT document::text FROM p) AS document,
        (SELECT document_hash FROM p) AS hash, (SELECT count(*) FROM f)::int AS fetched`,
    {
      device_id: col.nullable(col.text),
      ok: col.number,
      version: col.nullable(col.number),
      document: col.nullable(col.text),
      hash: col.nullable(col.text),
    },
  );
  if (!row?.device_id) throw unknownDevice();
  if (Number(row.ok) !== 1) throw replayedRequest();
  const view =
    row.version === null
      ? BUILTIN_VIEW
      : {
          version: Number(row.version),
          etag: policyEtag(Number(row.version), row.hash as string),
          policy: JSON.parse(row.document as string) as PolicyDocument,
        };
  const notModified = ifNoneMatch !== undefined && etagMatches(ifNoneMatch, view.etag);
  return {
    notModified,
    etag: view.etag,
    body: {
      success: true as const,
      deviceId: row.device_id,
      version: view.version,
      etag: view.etag,
      policy: view.policy,
      fetchedAt: now.toISOString(),
    },
  };
}

/** If-None-Match (RFC 9110 13.1.2): `*`, or a list of tags compared weakly (W/ ignored). */
export function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .includes(etag);
}
