// A bad day for the database, on a real PostgreSQL of this suite's own (from npm, so it can be stopped): each fault
// is injected, one route of every class is called, and each must answer 503 (never 500) without writing anything;
// then the fault is healed and each must work again, without a restart of the service. At the end every event batch
// that was accepted is stored, exactly once. The matrix is printed as a table.
//
// Faults: the server stopped; connections not allowed (ALTER DATABASE … ALLOW_CONNECTIONS false, as during a
// failover); backends terminated in the middle of a request; max_connections exhausted; statements past the
// statement timeout (node-postgres; the Data API has no statement timeout of ours); and, on the Data API path, the
// endpoint answering DatabaseResumingException (Aurora resuming from auto-pause) and ThrottlingException.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { DeviceIdentity } from '#agent/identity.ts';
import { databaseFault } from '#shared/core/db/errors.ts';
import { queryRows } from '#shared/core/db/query.ts';
import { seedDemoDatasource } from '#shared/requests/environments/demo.ts';
import { driversUnderTest } from '#test/support/databases.ts';
import { enrolledDevice, invocationEvent, prepare, send } from '#test/support/device-requests.ts';
import { type EmbeddedServer, startEmbeddedPostgres } from '#test/support/embedded-postgres.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const MAX_CONNECTIONS = 40;
let server: EmbeddedServer;
let superuser: pg.Client;

// Only when a driver of the matrix is under test: with none (TEST_DRIVERS=pglite) node:test runs no after hook.
const matrixDrivers = driversUnderTest().filter((d) => d !== 'pglite');
if (matrixDrivers.length > 0) {
  before(async () => {
    server = await startEmbeddedPostgres({ maxConnections: MAX_CONNECTIONS });
    superuser = await connected(server.url);
  });
  after(async () => {
    await superuser?.end().catch(() => {});
    await server?.destroy();
  });
}

/** A client of this suite: its connection is meant to die with some faults, which must not crash the run. */
const connected = async (connectionString: string): Promise<pg.Client> => {
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  await client.connect();
  return client;
};

/** What an HTTP route answered, for the matrix. */
const answer = (res: { status: number; body: Record<string, unknown> }) => ({
  outcome: String(res.status),
  error: res.body.error as string | undefined,
  message: res.body.message as string | undefined,
});

/** What a route answered: a status (HTTP) or, for a scheduled function, 'ok' or its fault class. */
type Outcome = string;

interface Route {
  name: string;
  /** Calls it once; `expect` is what it answers when the database is well. */
  call(): Promise<{ outcome: Outcome; error?: string; message?: string; retryAfter?: string | null }>;
  healthy: Outcome;
}

interface Fault {
  name: string;
  drivers: ReadonlyArray<'postgres' | 'data-api'>;
  /** Injects the fault, calls `run` while it lasts, and heals it. */
  during(run: () => Promise<void>): Promise<void>;
  /** The error code the routes answer during it. */
  code: 'database_unavailable' | 'database_busy';
  /**
   * The health check's status during it: 503 when the database cannot be reached; 200 when it still answers its
   * round trip (a lock or a killed statement elsewhere is not an outage).
   */
  health: '200' | '503';
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

for (const driver of matrixDrivers) {
  describe(`fault matrix on ${driver}`, () => {
    let svc: TestService;
    let database: string;
    let admin: string;
    let ana: string;
    let requestId: string;
    let identity: DeviceIdentity;
    const accepted: string[] = [];
    const matrix = new Map<string, Map<string, string>>();

    const requestBody = demoOrdersRequest();

    const routes: Route[] = [
      {
        name: 'device write',
        healthy: '200',
        call: async () => {
          const event = invocationEvent();
          const res = await send(svc.url, prepare('/v1/devices/events', identity, { events: [event] }));
          if (res.status === 200) accepted.push(event.event_id);
          return answer(res);
        },
      },
      {
        name: 'admin read',
        healthy: '200',
        call: async () => {
          const res = await svc.call('GET', '/v1/admin/requests', { token: admin });
          return { ...answer(res), retryAfter: res.headers.get('retry-after') };
        },
      },
      {
        name: 'request write',
        healthy: '201',
        call: async () => {
          const res = await svc.call('POST', '/v1/requests', { token: ana, body: requestBody });
          return answer(res);
        },
      },
      {
        name: 'query proxy',
        healthy: '200',
        call: async () => {
          const res = await svc.call('POST', `/v1/requests/${requestId}/query`, {
            token: ana,
            body: { sql: 'SELECT count(*) AS n FROM eu' },
          });
          return answer(res);
        },
      },
      {
        name: 'health check',
        healthy: '200',
        call: async () => {
          const res = await svc.call('GET', '/v1/healthcheck');
          return { outcome: String(res.status), error: (res.body.error ?? res.body.status) as string };
        },
      },
      {
        name: 'scheduled (fold)',
        healthy: 'ok',
        call: async () => {
          try {
            await svc.runSchedule('rollupFold');
            return { outcome: 'ok' };
          } catch (err) {
            return { outcome: databaseFault(err) ?? `unclassified: ${(err as Error).message}` };
          }
        },
      },
    ];

    /** Rows whose number must not change while a fault lasts (accepted event batches aside). */
    const counts = async () =>
      Object.fromEntries(
        (
          await superuserQuery<{ t: string; n: number }>(
            `SELECT 'requests' AS t, count(*)::int AS n FROM requests
             UNION ALL SELECT 'usage', count(*)::int FROM request_usage_events
             UNION ALL SELECT 'audit', count(*)::int FROM audit_logs`,
          )
        ).map((r) => [r.t, r.n]),
      );
    const eventCount = async () =>
      (await superuserQuery<{ n: number }>('SELECT count(*)::int AS n FROM observability_events'))[0]!.n;
    /** A query on the service's database as the superuser (its own connection: the service's may be the fault). */
    async function superuserQuery<T>(text: string): Promise<T[]> {
      const url = new URL(server.url);
      url.pathname = `/${database}`;
      const client = await connected(url.toString());
      try {
        return (await client.query(text)).rows as T[];
      } finally {
        await client.end();
      }
    }
    const terminateBackends = () =>
      superuser.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
    /** A session on the service's database holding ACCESS EXCLUSIVE locks on the tables the routes write or read. */
    async function lockTables(): Promise<pg.Client> {
      const url = new URL(server.url);
      url.pathname = `/${database}`;
      const holder = await connected(url.toString());
      await holder.query('BEGIN');
      await holder.query(
        'LOCK TABLE observability_events, requests, request_usage_events, health_probes, observability_fold_state, devices IN ACCESS EXCLUSIVE MODE',
      );
      return holder;
    }

    const faults: Fault[] = [
      {
        name: 'server stopped',
        health: '503',
        drivers: ['postgres', 'data-api'],
        code: 'database_unavailable',
        during: async (run) => {
          await server.stop();
          try {
            await run();
          } finally {
            await server.start();
            await superuser.end().catch(() => {});
            superuser = await connected(server.url);
          }
        },
      },
      {
        name: 'connections not allowed',
        health: '503',
        drivers: ['postgres', 'data-api'],
        code: 'database_unavailable',
        during: async (run) => {
          await superuser.query(`ALTER DATABASE ${quoteIdent(database)} ALLOW_CONNECTIONS false`);
          await terminateBackends();
          try {
            await run();
          } finally {
            await superuser.query(`ALTER DATABASE ${quoteIdent(database)} ALLOW_CONNECTIONS true`);
          }
        },
      },
      {
        name: 'backends terminated mid-request',
        health: '200',
        drivers: ['postgres', 'data-api'],
        code: 'database_unavailable',
        // The routes wait on locks; each waiting backend is terminated while its statement runs.
        during: async (run) => {
          const holder = await lockTables();
          let stop = false;
          const killer = (async () => {
            while (!stop) {
              await superuser.query(
                `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
                [database],
              );
              await new Promise((r) => setTimeout(r, 20));
            }
          })();
          try {
            await run();
          } finally {
            stop = true;
            await killer;
            await holder.query('ROLLBACK');
            await holder.end();
          }
        },
      },
      {
        name: 'max_connections exhausted',
        health: '503',
        drivers: ['postgres', 'data-api'],
        code: 'database_unavailable',
        during: async (run) => {
          await terminateBackends();
          const fillers: pg.Client[] = [];
          for (;;) {
            try {
              fillers.push(await connected(server.url));
            } catch (err) {
              assert.equal((err as { code?: string }).code, '53300', String(err));
              break;
            }
          }
          try {
            await run();
          } finally {
            await Promise.all(fillers.map((c) => c.end()));
          }
        },
      },
      {
        name: 'statement timeout',
        health: '200',
        drivers: ['postgres'],
        code: 'database_busy',
        during: async (run) => {
          const holder = await lockTables();
          try {
            await run();
          } finally {
            await holder.query('ROLLBACK');
            await holder.end();
          }
        },
      },
      {
        name: 'Data API: resuming',
        health: '503',
        drivers: ['data-api'],
        code: 'database_unavailable',
        during: async (run) => {
          svc.database.dataApi!.failNextWithResuming(1_000_000);
          try {
            await run();
          } finally {
            svc.database.dataApi!.failNextWithResuming(0);
          }
        },
      },
      {
        name: 'Data API: throttling',
        health: '503',
        drivers: ['data-api'],
        code: 'database_unavailable',
        during: async (run) => {
          svc.database.dataApi!.failNextWithThrottling(1_000_000);
          try {
            await run();
          } finally {
            svc.database.dataApi!.failNextWithThrottling(0);
          }
        },
      },
    ];

    before(async () => {
      svc = await startTestService(
        driver,
        {
          dashboard_url: 'http://dashboard.test',
          db: { statement_timeout: '2s', resume_wait: '1s', max_open_conns: 5 },
          query: { statement_timeout: '1s' },
        },
        { databaseServer: server.url },
      );
      database = new URL(svc.database.url!).pathname.slice(1);
      await seedDemoDatasource(svc.runtime.database.db);
      admin = await svc.adminToken();
      const password = 'a long enough password';
      await svc.call('POST', '/v1/admin/users', {
        token: admin,
        body: { email: 'ana@example.test', name: 'Ana', password, roles: ['user'] },
      });
      ana = (
        (await svc.call('POST', '/v1/auth/login', { body: { email: 'ana@example.test', password } })).body
          .data as {
          access_token: string;
        }
      ).access_token;
      const created = await svc.call('POST', '/v1/requests', { token: ana, body: requestBody });
      requestId = (created.body.data as { id: string }).id;
      const approved = await svc.call('POST', `/v1/admin/requests/${requestId}/approve`, {
        token: admin,
        body: {},
      });
      assert.equal((approved.body.data as { status: string }).status, 'active', approved.text);
      identity = await enrolledDevice(svc.url, admin);
    });

    after(async () => {
      await svc?.dispose();
      const names = routes.map((r) => r.name);
      const lines = [
        `| ${driver} | ${names.join(' | ')} |`,
        `|---|${names.map(() => '---').join('|')}|`,
        ...[...matrix].map(
          ([fault, cells]) => `| ${fault} | ${names.map((n) => cells.get(n) ?? '—').join(' | ')} |`,
        ),
      ];
      console.log(`\n${lines.join('\n')}\n`);
    });

    for (const fault of faults) {
      if (!fault.drivers.includes(driver as 'postgres' | 'data-api')) continue;
      test(`${fault.name}: 503 ${fault.code} on every route, nothing written; healed, every route works`, {
        timeout: 120_000,
      }, async () => {
        for (const route of routes)
          assert.equal((await route.call()).outcome, route.healthy, `${route.name} before`);
        const rowsBefore = await counts();
        const eventsBefore = await eventCount();
        const acceptedBefore = accepted.length;
        const cells = new Map<string, string>();
        const wrong: string[] = [];
        await fault.during(async () => {
          for (const route of routes) {
            const { outcome, error, message, retryAfter } = await route.call();
            if (outcome === '503' && route.name === 'admin read')
              assert.equal(retryAfter, '5', 'Retry-After');
            const isSchedule = route.healthy === 'ok';
            const expected = isSchedule
              ? fault.code === 'database_busy'
                ? 'busy'
                : 'unavailable'
              : route.name === 'health check'
                ? fault.health
                : '503';
            cells.set(route.name, isSchedule ? outcome : `${outcome} ${error ?? ''}`.trim());
            if (outcome !== expected) wrong.push(`${route.name}: ${outcome} ${error ?? ''} ${message ?? ''}`);
            else if (!isSchedule && route.name !== 'health check' && error !== fault.code) {
              wrong.push(`${route.name}: ${error}, not ${fault.code}`);
            }
            if (fault.code === 'database_busy' && route.name === 'admin read') {
              assert.match(String(message), /statement_timeout/, 'the message names the timeout');
            }
          }
        });
        matrix.set(fault.name, cells);
        assert.deepEqual(wrong, [], `${fault.name} on ${driver}`);
        // Nothing half-written: no request, usage event or audit record, and no event beyond the batches accepted.
        assert.deepEqual(await counts(), rowsBefore);
        assert.equal(await eventCount(), eventsBefore + (accepted.length - acceptedBefore));
        // Healed: every route works again, in the same service.
        for (const route of routes) {
          let result = await route.call();
          for (let i = 0; i < 40 && result.outcome !== route.healthy; i++) {
            await new Promise((r) => setTimeout(r, 250));
            result = await route.call();
          }
          assert.equal(
            result.outcome,
            route.healthy,
            `${route.name} after ${fault.name}: ${result.error} ${result.message}`,
          );
        }
      });
    }

    test('every accepted event batch is stored, exactly once', async () => {
      const ids = accepted.map((id) => `'${id}'`).join(',');
      const rows = await queryRows(
        svc.runtime.database.db,
        sql.raw(
          `SELECT count(*)::int AS n FROM observability_events WHERE event_id IN (${ids || `'${randomUUID()}'`})`,
        ),
      );
      assert.equal(rows[0]?.n, accepted.length);
      assert.ok(accepted.length >= 10);
    });
  });
}
