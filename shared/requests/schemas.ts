// Data-access request: the request body (scope with datasources, datasets, columns, nested filter groups, joins),
// the full Request view, list queries and the transition bodies. Identifiers that later become SQL identifiers in the
// builtin environment (namespaces, tables, columns) are restricted to plain PostgreSQL identifiers here, on the way in.
import * as z from 'zod';
import { REQUEST_STATUSES, RISK_LEVELS } from '../core/db/schema.ts';
import { envelope, isoTimestamp, pageEnvelope, pagination } from '../core/schemas/common.ts';
import {
  AUDIT_TIME_BOUNDS,
  boundedJson,
  boundedTime,
  cappedPagination,
  lenientQuery,
  nullAsAbsent,
} from '../core/schemas/input-rules.ts';

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const identifier = z.string().regex(IDENTIFIER, {
  message: 'must be a plain identifier: letters, digits and _, not starting with a digit',
});
/** A column: `name`, or `qualifier.name` for a column of a declared join (qualifier = its namespace or table). */
export const COLUMN = /^(?:([A-Za-z_][A-Za-z0-9_]{0,62})\.)?([A-Za-z_][A-Za-z0-9_]{0,62})$/;
/**
 * The name of a column in a request's view: `name`, or `qualifier_name` for a column of a declared join, in lower case
 * (what PostgreSQL folds unquoted identifiers to, so that plain SQL reads it).
 */
export function viewColumnName(column: string): string {
  const m = COLUMN.exec(column);
  if (!m) return column.toLowerCase();
  return (m[1] ? `${m[1]}_${m[2]}` : (m[2] as string)).toLowerCase();
}
const column = z.string().regex(COLUMN, {
  message: 'must be a plain column name, or qualifier.column for a column of a declared join',
});
const text = (max: number) => z.string().max(max);

export const FILTER_OPS = [
  'eq',
  'neq',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'not_in',
  'like',
  'ilike',
  'is_null',
  'is_not_null',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

export const filterCondition = nullAsAbsent(
  z
    .object({
      column,
      op: z.enum(FILTER_OPS),
      value: z.union([scalar, z.array(scalar).max(1000)]).optional(),
    })
    .strict(),
).superRefine((c, ctx) => {
  const isList = Array.isArray(c.value);
  if ((c.op === 'in' || c.op === 'not_in') && !isList) {
    ctx.addIssue({ code: 'custom', path: ['value'], message: `must be an array for op ${c.op}` });
  } else if ((c.op === 'is_null' || c.op === 'is_not_null') && c.value !== undefined && c.value !== null) {
    ctx.addIssue({ code: 'custom', path: ['value'], message: `must be absent for op ${c.op}` });
  } else if (c.op !== 'in' && c.op !== 'not_in' && c.op !== 'is_null' && c.op !== 'is_not_null') {
    if (isList || c.value === undefined || c.value === null) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `must be one value for op ${c.op}` });
    }
  }
});
export type FilterCondition = z.output<typeof filterCondition>;

export interface FilterGroup {
  logic: 'and' | 'or';
  conditions: Array<{ condition: FilterCondition } | { group: FilterGroup }>;
}

/** A filters object: conditions combined by `logic`; each item is `{condition}` or `{group}` (a nested filters). */
export const filterGroup: z.ZodType<FilterGroup> = z
  .lazy(() =>
    nullAsAbsent(
      z
        .object({
          logic: z.enum(['and', 'or']).default('and'),
          conditions: z
            .array(
              z.union([
                nullAsAbsent(z.object({ condition: filterCondition }).strict()),
                nullAsAbsent(z.object({ group: filterGroup }).strict()),
              ]),
            )
            .max(100),
        })
        .strict(),
    ),
  )
  .meta({ id: 'FilterGroup' });

const datasetSource = nullAsAbsent(
  z
    .object({
      kind: z.string().min(1).max(100),
      name: z.string().min(1).max(200),
      table: identifier.optional(),
      uri: text(2000).optional(),
      version: text(100).optional(),
    })
    .strict(),
);

/** `on` is an equality of two columns, `a = b` or `ns.a = ns2.b`: never free SQL. */
export const JOIN_ON =
  /^\s*([A-Za-z_]\w{0,62})(?:\.([A-Za-z_]\w{0,62}))?\s*=\s*([A-Za-z_]\w{0,62})(?:\.([A-Za-z_]\w{0,62}))?\s*$/;

const join = nullAsAbsent(
  z
    .object({
      namespace: identifier,
      on: z
        .string()
        .max(300)
        .regex(JOIN_ON, { message: 'must be an equality of two columns, e.g. a.id = b.a_id' }),
      source: nullAsAbsent(
        z
          .object({
            kind: z.string().min(1).max(100),
            name: z.string().min(1).max(200),
            table: identifier.optional(),
          })
          .strict(),
      ),
      type: z.enum(['inner', 'left']).default('inner'),
    })
    .strict(),
);

export const dataset = nullAsAbsent(
  z
    .object({
      namespace: identifier,
      source: datasetSource,
      columns: z.array(column).min(1).max(500),
      filters: filterGroup.optional(),
      joins: z.array(join).max(10).default([]),
    })
    .strict(),
).superRefine((d, ctx) => {
  // Each column becomes one view column, named in lower case (`qualifier_name` for a join's column).
  const seen = new Set<string>();
  d.columns.forEach((c, i) => {
    const name = viewColumnName(c);
    if (seen.has(name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['columns', i],
        message: `names the same view column as another one (${name}; names are not case-sensitive)`,
      });
    }
    seen.add(name);
  });
});
export type Dataset = z.output<typeof dataset>;

export const scope = nullAsAbsent(
  z
    .object({
      credentials: nullAsAbsent(
        z.object({ refs: z.record(z.string(), z.string().max(500)).default({}) }).catchall(z.unknown()),
      ).optional(),
      datasources: z
        .array(
          nullAsAbsent(
            z
              .object({
                credential_ref: z.string().max(200).optional(),
                datasets: z.array(dataset).min(1).max(50),
              })
              .strict(),
          ),
        )
        .min(1)
        .max(20),
    })
    .strict(),
)
  .superRefine((value, ctx) => {
    // Each dataset becomes one view named by its namespace: namespaces are unique within a request.
    const seen = new Set<string>();
    value.datasources.forEach((ds, i) => {
      ds.datasets.forEach((d, j) => {
        const name = d.namespace.toLowerCase();
        if (seen.has(name) || name.startsWith('pg_')) {
          ctx.addIssue({
            code: 'custom',
            path: ['datasources', i, 'datasets', j, 'namespace'],
            message: name.startsWith('pg_') ? 'must not start with pg_' : 'is used by another dataset',
          });
        }
        seen.add(name);
      });
    });
  })
  .meta({ id: 'RequestScope' });
export type Scope = z.output<typeof scope>;

export const createRequestBody = nullAsAbsent(
  z
    .object({
      title: z.string().trim().min(1).max(200),
      description: text(5000).default(''),
      business_justification: text(5000).default(''),
      risk_level: z.enum(RISK_LEVELS).default('low'),
      valid_until: z.iso.datetime({ offset: true }).optional(),
      external_ticket_id: text(200).optional(),
      external_ticket_url: z.url().max(2000).optional(),
      request_template: nullAsAbsent(
        z.object({ id: z.string().max(200), name: z.string().max(200) }).strict(),
      ).optional(),
      scope,
    })
    .strict(),
);
export type CreateRequestBody = z.output<typeof createRequestBody>;

const credentialView = z.object({
  id: z.string(),
  type: z.string(),
  username: z.string(),
  secret_preview: z.string(),
  is_active: z.boolean(),
  use_count: z.number().int(),
  last_used_at: isoTimestamp.nullable(),
});

export const tunnelView = z
  .object({
    id: z.string(),
    provider: z.string(),
    sidecar_name: z.string(),
    status: z.string(),
    last_error: z.string(),
    api_url: z.string(),
    edge_url: z.string(),
    explorer_url: z.string(),
    public_url: z.string(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    credentials: z.array(credentialView),
  })
  .meta({ id: 'Tunnel' });
export type TunnelView = z.output<typeof tunnelView>;

export const usageEventView = z.object({
  id: z.string(),
  action_type: z.string(),
  ip_address: z.string(),
  timestamp: isoTimestamp,
  metadata: z.unknown(),
});

export const requestView = z
  .object({
    id: z.string(),
    title: z.string(),
    description: z.string(),
    business_justification: z.string(),
    status: z.enum(REQUEST_STATUSES),
    risk_level: z.enum(RISK_LEVELS),
    source: z.string(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
    valid_until: isoTimestamp.nullable(),
    approved_at: isoTimestamp.nullable(),
    approved_by: z.string().nullable(),
    approval_notes: z.string().nullable(),
    denial_reason: z.string().nullable(),
    external_ticket_id: z.string().nullable(),
    external_ticket_url: z.string().nullable(),
    datasource_names: z.array(z.string()),
    environment_id: z.string().nullable(),
    environment_status: z.string().nullable(),
    request_template: z.object({ id: z.string(), name: z.string() }).nullable(),
    requester: z.object({ id: z.string(), name: z.string(), email: z.string() }),
    scope,
    tunnel: tunnelView.nullable(),
    usage_events: z.array(usageEventView),
  })
  .meta({ id: 'Request' });
export type RequestView = z.output<typeof requestView>;

export const requestSort = z.enum(['created_at', '-created_at']).default('-created_at');

export const listOwnRequestsQuery = z
  .object({ status: z.enum(REQUEST_STATUSES).optional(), sort: requestSort, ...pagination })
  .strict();
/**
 * The spec lists no 400 for the admin list, so no parameter is refused (shared/core/schemas/input-rules.ts): limit and
 * offset are capped, an unknown status or risk_level matches nothing, an unknown sort is the default, unknown
 * parameters are ignored. The caller's own list (above) keeps refusing them.
 */
export const listAdminRequestsQuery = z.object({
  status: lenientQuery.filter(REQUEST_STATUSES),
  risk_level: lenientQuery.filter(RISK_LEVELS),
  sort: lenientQuery.choice(['created_at', '-created_at'], '-created_at'),
  ...cappedPagination,
});
export type ListRequestsQuery = z.output<typeof listAdminRequestsQuery> & { requester_id?: string };

export const requestListResponse = pageEnvelope('requests', requestView);
export const requestResponse = envelope(requestView);

export const USAGE_ACTIONS = ['query', 'query_failed', 'query_refused'] as const;
/** What a usage event records: an executed query, one that failed in the database, one the SQL guard refused. */
export type UsageAction = (typeof USAGE_ACTIONS)[number];
/** All of a request's usage events, a page at a time (its view shows only the newest). */
export const listUsageEventsQuery = z
  .object({
    action_type: z.enum(USAGE_ACTIONS).optional(),
    sort: z.enum(['timestamp', '-timestamp']).default('-timestamp'),
    ...pagination,
  })
  .strict();
export type ListUsageEventsQuery = z.output<typeof listUsageEventsQuery>;
export const usageEventListResponse = pageEnvelope('usage_events', usageEventView);

// The handler passes {} for an absent body, so optional bodies are objects with optional fields.
export const approveBody = nullAsAbsent(z.object({ notes: z.string().max(5000).optional() }).strict());
export const denyBody = nullAsAbsent(z.object({ reason: z.string().trim().min(1).max(5000) }).strict());
export const revokeBody = nullAsAbsent(z.object({ reason: z.string().max(5000).optional() }).strict());

export const queryBody = nullAsAbsent(z.object({ sql: z.string().min(1).max(100_000) }).strict());
export const queryResultView = z.object({
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.array(z.unknown())),
  row_count: z.number().int(),
  truncated: z.boolean(),
  duration_ms: z.number(),
});
export const queryResponse = z.object({ data: queryResultView });

export const requestIdParam = z.object({ id: z.string().min(1).max(200) });

/** One record shipped by the log shipper; the service sets source = logshipper, id, created_at and the hash. */
export const shippedAuditRecord = nullAsAbsent(
  z
    .object({
      action_type: z.string().min(1).max(200),
      // The chain's range (AUDIT_TIME_BOUNDS): stored and hashed in UTC to the millisecond.
      timestamp: boundedTime(z.iso.datetime({ offset: true, abort: true }), AUDIT_TIME_BOUNDS).meta({
        description:
          'RFC 3339 with a zone (Z or ±hh:mm), from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z: kept as the instant in UTC, to the millisecond (the offset and digits past the millisecond are not kept), and covered by the record’s hash as kept',
      }),
      actor_email: z.string().max(320).default(''),
      actor_id: z.string().max(200).default(''),
      app_name: z.string().max(200).default(''),
      container_id: z.string().max(200).default(''),
      environment_id: z.string().max(200).default(''),
      environment_name: z.string().max(200).default(''),
      ip_address: z.string().max(100).default(''),
      level: z.enum(['info', 'warn', 'error']).default('info'),
      resource_id: z.string().max(200).default(''),
      resource_type: z.string().max(200).default(''),
      stage: z.string().max(200).default(''),
      metadata: boundedJson(z.record(z.string(), z.unknown()), 65_536).default({}),
    })
    .strict(),
);
export const MAX_INGEST_BATCH = 1000;
export const ingestAuditBody = nullAsAbsent(
  z.object({ records: z.array(shippedAuditRecord).min(1).max(MAX_INGEST_BATCH) }).strict(),
);
export type IngestAuditBody = z.output<typeof ingestAuditBody>;
export const ingestAuditResponse = envelope(
  z.object({ accepted: z.number().int(), ids: z.array(z.string()) }),
);
export const auditVerifyQuery = z
  .object({
    at_seq: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
    since: z.enum(['start', 'verified']).default('start').meta({
      description:
        'start: walk from the first record; verified: walk on from the last verified point (the head of the last intact walk, while the chain still has it), hashing only the records after it',
    }),
  })
  .strict()
  .refine((q) => q.since === 'start' || q.at_seq === undefined, {
    path: ['at_seq'],
    message: 'at_seq needs a walk from the first record (since=start)',
  });
const chainPoint = z.object({ seq: z.number().int(), hash: z.string(), created_at: isoTimestamp });
export const auditVerifyResponse = envelope(
  z.object({
    intact: z.boolean(),
    checked: z.number().int(),
    broken_at: z
      .object({
        id: z.string().meta({ description: 'The id of the first record that does not verify' }),
        seq: z.number().int().meta({ description: 'Its position in the chain (1 is the first record)' }),
        timestamp: isoTimestamp,
        reason: z.enum(['content', 'link']).meta({
          description:
            'content: its fields, as stored, no longer give its hash (it was changed); link: its prev_hash is not the hash of the record before it (a record was removed or put in before it)',
        }),
      })
      .nullable()
      .meta({ description: 'The first record that does not verify; null when the chain is intact' }),
    /** The last record of the verified chain (when broken: the last one before the break); null for an empty log. */
    head: chainPoint.nullable(),
    /** With ?since=verified: the point the walk started after (null: it started at the first record). */
    verified_from: z
      .object({
        seq: z.number().int(),
        count: z.number().int().meta({ description: 'Records in the chain up to and including seq' }),
        verified_at: isoTimestamp,
      })
      .nullable()
      .optional()
      .meta({
        description:
          'With since=verified: the last verified point the walk started after, and when it was verified; `checked` counts the records after it. Null: no point, or the chain no longer has it, so the walk started at the first record',
      }),
    /** With ?at_seq: that record as the verified chain has it now (null if it is past the head or absent). */
    at: chainPoint.nullable().optional(),
    /** With audit.anchors: the chain compared with every signed anchor outside the database. */
    anchors: z
      .object({
        location: z
          .string()
          .meta({ description: 'Where the anchors were read: a directory or s3://bucket/prefix' }),
        checked: z.number().int().meta({ description: 'Anchors the chain was compared with' }),
        first_mismatch: z
          .object({
            key: z.string().meta({ description: "The anchor's object key" }),
            seq: z.number().int().meta({ description: 'The seq the anchor holds the hash of' }),
            reason: z.enum(['hash', 'count', 'missing', 'signature']).meta({
              description:
                'hash: the record at seq has another hash now (history up to it was rewritten, every hash recomputed); count: another number of records up to seq; missing: no record at seq (removed, or the chain ends before it); signature: the anchor or its key does not verify',
            }),
            after_seq: z.number().int().meta({
              description:
                'The seq of the last anchor the chain passes through before this one (0: none): the change is after it',
            }),
          })
          .nullable()
          .meta({ description: 'The first anchor the chain does not pass through; null when it passes all' }),
      })
      .optional(),
  }),
);
