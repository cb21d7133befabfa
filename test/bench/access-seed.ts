// The data-access side of the bench:console --pages data set: catalog entries and data-access requests in every state,
// made through the domain functions the API's handlers call (createCatalogEntry, createRequest, approveRequest,
// denyRequest, revokeRequest, and the lifecycle's provisioning, expiry and teardown), so that each request's state was
// reached by the state machine's own moves and every step has its audit record, as through the API.

import { createCatalogEntry } from '#shared/catalog/catalog.ts';
import { createCatalogBody } from '#shared/catalog/schemas.ts';
import type { Principal } from '#shared/core/auth/principal.ts';
import type { Config } from '#shared/core/config/schema.ts';
import type { Db } from '#shared/core/db/database.ts';
import type { EnvironmentProvider } from '#shared/requests/environments/types.ts';
import { provisionAfterApproval, SYSTEM_ACTOR, teardownEnvironment } from '#shared/requests/lifecycle.ts';
import {
  approveRequest,
  createRequest,
  denyRequest,
  moveRequest,
  revokeRequest,
} from '#shared/requests/requests.ts';
import { createRequestBody } from '#shared/requests/schemas.ts';

const DATASOURCES = [
  'billing',
  'crm',
  'warehouse',
  'support',
  'marketing',
  'hr',
  'payments',
  'inventory',
  'logistics',
  'analytics',
];
const TABLES = [
  'customers',
  'orders',
  'invoices',
  'payments',
  'refunds',
  'products',
  'shipments',
  'tickets',
  'contacts',
  'accounts',
  'events',
  'subscriptions',
  'plans',
  'regions',
  'employees',
  'campaigns',
  'leads',
  'returns',
  'suppliers',
  'stock',
];
const COLUMNS = ['id', 'name', 'email', 'country', 'status', 'amount', 'currency', 'created_at'];
const RISKS = ['low', 'medium', 'high'] as const;

/**
 * Where a request ends, by its number (i % 20): 6 pending, 3 denied, 6 active, 1 approved whose provisioning failed,
 * 3 revoked (after being active), 1 expired (after being active).
 */
const FATE = [
  'pending',
  'denied',
  'active',
  'pending',
  'active',
  'revoked',
  'pending',
  'denied',
  'active',
  'approved',
  'pending',
  'active',
  'revoked',
  'pending',
  'denied',
  'active',
  'expired',
  'pending',
  'active',
  'revoked',
] as const;

/**
 * A stand-in for the environment service (envsvc.provider = "http" in a deployment): it provisions nothing real, but
 * answers as one does, and fails for requests whose title says so (the lifecycle then leaves them approved with
 * environment_status = failed, as a real failure would).
 */
const benchProvider: EnvironmentProvider = {
  name: 'http',
  checksActive: false,
  withoutTimeout: false,
  async query() {
    throw new Error('bench environments run no queries');
  },
  async provision(request) {
    if (request.title.includes('[fails]')) throw new Error('environment service: no capacity in eu-west-1');
    const now = new Date().toISOString();
    const id = `env-${request.id.slice(0, 8)}`;
    return {
      environmentId: id,
      tunnel: {
        id,
        provider: 'http',
        sidecar_name: `sidecar-${id}`,
        status: 'ready',
        last_error: '',
        api_url: `/v1/requests/${request.id}/query`,
        edge_url: '',
        explorer_url: '',
        public_url: '',
        created_at: now,
        updated_at: now,
        credentials: [
          {
            id: `cred-${id}`,
            type: 'database_role',
            username: `req_${request.id.slice(0, 8)}`,
            secret_preview: '',
            is_active: true,
            use_count: 0,
            last_used_at: null,
          },
        ],
      },
    };
  },
  async teardown() {},
};

const user = (n: number): Principal => ({
  subject: `bench-user-${n}`,
  email: `user${n}@example.test`,
  name: `User ${n}`,
  roles: ['user'],
  tokenUse: 'session',
});
const ADMIN: Principal = {
  subject: 'bench-admin',
  email: 'security-admin@example.test',
  name: 'Security Admin',
  roles: ['admin'],
  tokenUse: 'session',
};

/** Runs `task(i)` for i in [0, n) with `width` at a time. */
async function pooled(n: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

export interface AccessSeed {
  catalog: number;
  requests: Record<(typeof FATE)[number], number>;
}

/** `entries` catalog entries and `count` requests in every state (FATE), `width` at a time; returns what it made. */
export async function seedAccess(
  db: Db,
  config: Config,
  { entries, count, width = 8 }: { entries: number; count: number; width?: number },
): Promise<AccessSeed> {
  const ip = '10.0.0.1';
  await pooled(entries, width, async (i) => {
    const datasource = DATASOURCES[i % DATASOURCES.length] as string;
    const table = `${TABLES[Math.floor(i / DATASOURCES.length) % TABLES.length]}${i >= DATASOURCES.length * TABLES.length ? `_${i}` : ''}`;
    await createCatalogEntry(
      db,
      createCatalogBody.parse({
        datasource_id: `ds-${datasource}`,
        datasource_name: datasource,
        target_name: table,
        target_location: `${datasource}.${table}`,
        summary: `${table[0]?.toUpperCase()}${table.slice(1)} of ${datasource}: ${COLUMNS.length} columns`,
        scan_policy: i % 3 === 0 ? 'daily' : 'weekly',
        metadata: {
          owner: `${datasource}-team@example.test`,
          pii: i % 4 === 0,
          rows_estimate: 1000 * (i + 1),
        },
        schema: { columns: COLUMNS.map((name) => ({ name, type: name === 'amount' ? 'numeric' : 'text' })) },
      }),
      { id: ADMIN.subject, email: ADMIN.email, ipAddress: ip },
    );
  });

  const made: AccessSeed['requests'] = {
    pending: 0,
    denied: 0,
    active: 0,
    approved: 0,
    revoked: 0,
    expired: 0,
  };
  await pooled(count, width, async (i) => {
    const fate = FATE[i % FATE.length] as (typeof FATE)[number];
    const datasource = DATASOURCES[i % DATASOURCES.length] as string;
    const table = TABLES[(i * 7) % TABLES.length] as string;
    const body = createRequestBody.parse({
      title: `${table} of ${datasource} for the Q${1 + (i % 4)} review #${i}${fate === 'approved' ? ' [fails]' : ''}`,
      description: `Read-only access to ${datasource}.${table} for the quarterly review.`,
      business_justification: 'Quarterly review of churn and revenue by region.',
      risk_level: RISKS[i % RISKS.length],
      external_ticket_id: `SEC-${10_000 + i}`,
      scope: {
        datasources: [
          {
            datasets: [
              {
                namespace: table,
                source: { kind: 'postgres', name: datasource, table },
                columns: COLUMNS.slice(0, 3 + (i % 5)),
              },
            ],
          },
        ],
      },
    });
    const { request } = await createRequest(db, config, body, user(i % 250), ip);
    if (fate === 'pending') return void made.pending++;
    if (fate === 'denied') {
      await denyRequest(db, request.id, 'Scope is wider than the review needs.', ADMIN, ip);
      return void made.denied++;
    }
    const approved = await approveRequest(db, request.id, 'Approved for the review.', ADMIN, ip);
    const after = await provisionAfterApproval(db, benchProvider, approved);
    if (fate === 'approved') {
      if (after.status !== 'approved' || after.environmentStatus !== 'failed')
        throw new Error('expected a failure');
      return void made.approved++;
    }
    if (after.status !== 'active') throw new Error(`request ${request.id} is ${after.status}, not active`);
    if (fate === 'active') return void made.active++;
    const ended =
      fate === 'revoked'
        ? await revokeRequest(db, request.id, 'Review finished.', ADMIN, ip)
        : await moveRequest(db, request.id, 'expire', SYSTEM_ACTOR, {
            metadata: { reason: 'valid_until passed' },
          });
    await teardownEnvironment(db, benchProvider, ended);
    made[fate]++;
  });
  return { catalog: entries, requests: made };
}
